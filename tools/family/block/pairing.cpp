#include "family/block/pairing.hpp"

#include <algorithm>

namespace tracekit::block {

namespace {

// At one timestamp: starts before requeues before completions.
int rank(Kind k) {
  switch (k) {
    case Kind::kInsert:
      return 0;
    case Kind::kIssue:
      return 1;
    case Kind::kRequeue:
      return 2;
    case Kind::kComplete:
      return 3;
  }
  return 3;
}

}  // namespace

void Pairer::start(const Event& e) {
  Key key{e.dev, e.sector};
  const bool insert = e.kind == Kind::kInsert;
  if (auto it = pending_.find(key); it != pending_.end()) {
    Pending& p = it->second;
    if (p.requeued) {  // the same I/O again: keeps its first start
      p.requeued = false;
      p.issued = !insert;
      return;
    }
    if (!insert && p.queued && !p.issued) {  // the issue of an inserted I/O
      p.issued = true;
      p.sectors = std::max(p.sectors, e.nr_sector);  // grown by back merges
      return;
    }
    ++stats_.replaced;
    pending_.erase(it);
  }
  if (!insert && queue_start_) {
    // -Q: the issue of an inserted request that a front merge moved to a
    // lower sector covers its insert's sector: the earliest such insert.
    auto found = pending_.end();
    for (auto in = pending_.lower_bound(key); in != pending_.end() && in->first.first == e.dev &&
                                              in->first.second < e.sector + e.nr_sector;
         ++in)
      if (in->second.queued && !in->second.issued && in->second.start_ts <= e.ts &&
          (found == pending_.end() || in->second.start_ts < found->second.start_ts))
        found = in;
    if (found != pending_.end()) {
      Pending moved = std::move(found->second);
      pending_.erase(found);
      moved.issued = true;
      moved.sectors = e.nr_sector;
      ++stats_.front_merged;
      pending_.emplace(key, std::move(moved));
      return;
    }
  }
  Pending p;
  p.start_ts = e.ts;
  p.first_sector = e.sector;
  p.sectors = e.nr_sector;
  p.bytes = e.bytes;
  p.pid = e.pid;
  p.comm = e.comm;
  p.queued = insert;
  p.issued = !insert;
  pending_.emplace(key, std::move(p));
}

void Pairer::requeue(const Event& e) {
  auto it = pending_.find({e.dev, e.sector});
  if (it == pending_.end()) return;
  it->second.requeued = true;
  it->second.issued = false;
  ++stats_.requeued;
}

bool Pairer::complete(const Event& e, const Done& done) {
  const uint64_t end = e.sector + e.nr_sector;
  auto it = pending_.find({e.dev, e.sector});
  if (it == pending_.end() || it->second.start_ts > e.ts) {
    // Front merged: the request now starts below its start's sector. The
    // earliest start inside the completed range is the request's.
    it = pending_.end();
    for (auto in = pending_.lower_bound({e.dev, e.sector});
         in != pending_.end() && in->first.first == e.dev && in->first.second < end; ++in)
      if (in->second.start_ts <= e.ts &&
          (it == pending_.end() || in->second.start_ts < it->second.start_ts))
        it = in;
    if (it == pending_.end()) return false;
    ++stats_.front_merged;
  }
  Pending p = std::move(it->second);
  pending_.erase(it);
  // Starts inside the completed range, older than this completion, were
  // merged into this request: they will not complete on their own.
  for (auto in = pending_.lower_bound({e.dev, e.sector});
       in != pending_.end() && in->first.first == e.dev && in->first.second < end;) {
    if (in->second.start_ts <= e.ts) {
      in = pending_.erase(in);
      ++stats_.merged;
    } else {
      ++in;
    }
  }
  p.done_sectors += e.nr_sector;
  if (e.nr_sector > 0 && e.nr_sector < p.sectors) {
    // A part: the rest of the request is now at end.
    ++stats_.split;
    p.sectors -= e.nr_sector;
    auto [at, fresh] = pending_.try_emplace({e.dev, end}, std::move(p));
    if (!fresh) {
      ++stats_.replaced;
      at->second = std::move(p);
    }
    return true;
  }
  Io io;
  io.start_ts = p.start_ts;
  io.end_ts = e.ts;
  io.dev = e.dev;
  io.sector = std::min(p.first_sector, e.sector);  // below its start: front merged
  io.bytes = p.done_sectors ? p.done_sectors * 512 : p.bytes;
  io.rwbs = e.rwbs;
  io.pid = p.pid;
  io.comm = std::move(p.comm);
  io.queued = p.queued;
  ++stats_.completed;
  done(io);
  return true;
}

void Pairer::run(std::vector<Event> fresh, bool hold, const Done& done) {
  // Held completions had their second chance once the next batch is read:
  // their starts, on another CPU, were in the rings by then.
  std::vector<std::pair<Event, bool>> events;  // the event, whether it was held back
  events.reserve(held_.size() + fresh.size());
  for (auto& e : held_) events.emplace_back(std::move(e), true);
  for (auto& e : fresh) events.emplace_back(std::move(e), false);
  held_.clear();
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.first.ts != b.first.ts ? a.first.ts < b.first.ts
                                    : rank(a.first.kind) < rank(b.first.kind);
  });
  for (auto& [e, retried] : events) {
    switch (e.kind) {
      case Kind::kInsert:
        if (queue_start_) start(e);
        break;
      case Kind::kIssue:
        start(e);
        break;
      case Kind::kRequeue:
        requeue(e);
        break;
      case Kind::kComplete:
        if (!complete(e, done)) {
          if (hold && !retried)
            held_.push_back(std::move(e));
          else
            ++stats_.unmatched;
        }
        break;
    }
  }
}

void Pairer::feed(std::vector<Event> batch, const Done& done) {
  run(std::move(batch), /*hold=*/true, done);
}

void Pairer::finish(const Done& done) { run({}, /*hold=*/false, done); }

void Pairer::reset() {
  pending_.clear();
  held_.clear();
  ++stats_.resets;
}

}  // namespace tracekit::block
