// How this works: the profile is built in the generated protobuf classes
// (lite runtime), with every string interned once in the string table and
// locations and functions deduplicated through maps keyed by what makes
// them distinct; then it is serialized and compressed with zlib's deflate
// in gzip framing (no file name, mtime 0, so the same report always gives
// the same bytes). Samples, one per record, are serialized as they are
// made, through one reused Sample, rather than kept as messages (100,000
// of them cost about 35 MB): the profile's bytes are its sample types
// (field 1), the samples (field 2), then the rest (fields 3 and up), as
// serializing the whole message would order them.
#include "output/pprof.hpp"

#include <zlib.h>

#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "output/pprof/profile.pb.h"

namespace tracekit::output {

namespace {

// The profile under construction, with the indices that deduplicate it.
class Builder {
 public:
  explicit Builder(const report::Report& r) : r_(r) {
    str("");  // entry 0 is always the empty string
    mapping_named_.assign(r.mappings.size(), true);
    mapping_used_.assign(r.mappings.size(), false);
  }

  int64_t str(const std::string& s) {
    auto [it, fresh] = strings_.try_emplace(s, p_.string_table_size());
    if (fresh) p_.add_string_table(s);
    return it->second;
  }

  void value_type(pprof::ValueType* vt, const char* type, const char* unit) {
    vt->set_type(str(type));
    vt->set_unit(str(unit));
  }

  // The location of f; leaf: f.addr is where the thread was, else a return
  // address.
  uint64_t location(const report::Frame& f, bool leaf) {
    int32_t m = f.mapping >= 0 && static_cast<size_t>(f.mapping) < r_.mappings.size() ? f.mapping
                                                                                      : -1;
    uint64_t addr = leaf || f.addr == 0 ? f.addr : f.addr - 1;
    auto [it, fresh] = locations_.try_emplace({m, addr}, 0);
    if (!fresh) return it->second;
    pprof::Location* loc = p_.add_location();
    loc->set_id(p_.location_size());
    it->second = loc->id();
    loc->set_address(addr);
    if (m >= 0) {
      loc->set_mapping_id(static_cast<uint64_t>(m) + 1);
      mapping_used_[m] = true;
      if (f.name.empty()) mapping_named_[m] = false;
    }
    if (!f.name.empty())
      loc->add_line()->set_function_id(function(f.name, m >= 0 ? r_.mappings[m].file : ""));
    return it->second;
  }

  // The one location of a side whose stack was lost: no address, no mapping.
  uint64_t missed(const std::string& marker) {
    auto [it, fresh] = missed_.try_emplace(marker, 0);
    if (!fresh) return it->second;
    pprof::Location* loc = p_.add_location();
    loc->set_id(p_.location_size());
    loc->add_line()->set_function_id(function(marker, ""));
    it->second = loc->id();
    return it->second;
  }

  void side(pprof::Sample* s, const report::Stack& st, const std::string& marker) {
    if (st.state == report::StackState::kMissed) {
      s->add_location_id(missed(marker));
      return;
    }
    std::span<const report::FrameTable::Id> ids = r_.frames.ids(st);
    for (size_t i = 0; i < ids.size(); ++i) s->add_location_id(location(r_.frames[ids[i]], i == 0));
  }

  void label(pprof::Sample* s, const char* key, const std::string& value) {
    pprof::Label* l = s->add_label();
    l->set_key(str(key));
    l->set_str(str(value));
  }

  // Appends rec's sample to samples_, as the profile's field 2.
  void sample(const report::Record& rec) {
    pprof::Sample* s = &sample_;
    s->Clear();
    side(s, rec.kernel, r_.style.missed_kernel);
    side(s, rec.user, r_.style.missed_user);
    auto v = static_cast<int64_t>(rec.value);
    switch (r_.unit) {
      case report::Unit::kSamples:
        s->add_value(v);
        s->add_value(v * static_cast<int64_t>(r_.period_ns));
        break;
      case report::Unit::kMicroseconds: s->add_value(v * 1000); break;
      case report::Unit::kEvents: s->add_value(v); break;
    }
    if (rec.pid >= 0) {
      pprof::Label* l = s->add_label();
      l->set_key(str("pid"));
      l->set_num(rec.pid);
    }
    if (!rec.comm.empty()) label(s, "comm", rec.comm);
    bool k = rec.kernel.state != report::StackState::kAbsent;
    bool u = rec.user.state != report::StackState::kAbsent;
    if (k || u) label(s, "stack", k && u ? "kernel+user" : k ? "kernel" : "user");
    samples_ += '\x12';  // field 2, length-delimited
    for (size_t n = s->ByteSizeLong();; n >>= 7) {
      if (n < 0x80) {
        samples_ += static_cast<char>(n);
        break;
      }
      samples_ += static_cast<char>((n & 0x7f) | 0x80);
    }
    s->AppendToString(&samples_);
  }

  // The serialized profile.
  std::string build() {
    switch (r_.unit) {
      case report::Unit::kSamples:
        value_type(types_.add_sample_type(), "samples", "count");
        value_type(types_.add_sample_type(), "cpu", "nanoseconds");
        value_type(p_.mutable_period_type(), "cpu", "nanoseconds");
        p_.set_period(static_cast<int64_t>(r_.period_ns));
        p_.set_default_sample_type(str("cpu"));
        break;
      case report::Unit::kMicroseconds:
        value_type(types_.add_sample_type(), "off-cpu", "nanoseconds");
        break;
      case report::Unit::kEvents: value_type(types_.add_sample_type(), "events", "count"); break;
    }
    for (const report::Record& rec : r_.records) sample(rec);
    for (size_t i = 0; i < r_.mappings.size(); ++i) {
      const report::Mapping& m = r_.mappings[i];
      pprof::Mapping* pm = p_.add_mapping();
      pm->set_id(i + 1);
      pm->set_memory_start(m.start);
      pm->set_memory_limit(m.limit);
      pm->set_file_offset(m.offset);
      pm->set_filename(str(m.file));
      if (!m.build_id.empty()) pm->set_build_id(str(m.build_id));
      pm->set_has_functions(mapping_used_[i] && mapping_named_[i]);
    }
    if (!r_.command.empty()) p_.add_comment(str(r_.command));
    if (!r_.host.empty()) p_.add_comment(str("host: " + r_.host));
    auto total = [&](const char* what, uint64_t n) {
      if (n != 0) p_.add_comment(str(what + std::to_string(n)));
    };
    total("lost events: ", r_.totals.lost_events);
    total("missed stacks: ", r_.totals.missed_stacks);
    total("dropped: ", r_.totals.dropped);
    total("truncated stacks: ", r_.totals.truncated_stacks);
    p_.set_time_nanos(r_.start_unix_ns);
    p_.set_duration_nanos(r_.duration_ns);
    std::string bytes = types_.SerializeAsString();
    bytes += samples_;
    std::string().swap(samples_);
    p_.AppendToString(&bytes);
    return bytes;
  }

 private:
  uint64_t function(const std::string& name, const std::string& file) {
    auto [it, fresh] = functions_.try_emplace({name, file}, 0);
    if (!fresh) return it->second;
    pprof::Function* fn = p_.add_function();
    fn->set_id(p_.function_size());
    fn->set_name(str(name));
    fn->set_system_name(fn->name());  // our names are demangled already
    if (!file.empty()) fn->set_filename(str(file));
    it->second = fn->id();
    return it->second;
  }

  const report::Report& r_;
  pprof::Profile types_;  // the sample types (field 1) alone
  std::string samples_;   // the samples as serialized (field 2)
  pprof::Sample sample_;  // the one being made
  pprof::Profile p_;      // the rest
  std::unordered_map<std::string, int64_t> strings_;
  std::map<std::pair<int32_t, uint64_t>, uint64_t> locations_;
  std::map<std::string, uint64_t> missed_;
  std::map<std::pair<std::string, std::string>, uint64_t> functions_;
  std::vector<bool> mapping_named_;  // every location in it has a function
  std::vector<bool> mapping_used_;
};

// gzip framing around deflate: windowBits 15 + 16.
void gzip(std::ostream& out, const std::string& data) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    out.setstate(std::ios::badbit);
    return;
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  char buf[64 * 1024];
  int rc;
  do {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = deflate(&zs, Z_FINISH);
    out.write(buf, static_cast<std::streamsize>(sizeof buf - zs.avail_out));
  } while (rc == Z_OK);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) out.setstate(std::ios::badbit);
}

}  // namespace

void write_pprof(std::ostream& out, const report::Report& r) {
  gzip(out, Builder(r).build());
  out.flush();
}

}  // namespace tracekit::output
