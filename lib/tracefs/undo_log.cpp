#include "tracefs/undo_log.hpp"

#include <sys/stat.h>

#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "tracefs/instance.hpp"
#include "util/safe_file.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

std::string current_value(std::string_view text) {
  text = trim(text);
  auto open = text.find('[');
  auto close = open == std::string_view::npos ? open : text.find(']', open);
  if (close != std::string_view::npos) return std::string(text.substr(open + 1, close - open - 1));
  constexpr std::string_view kExpanded = "(expanded: ";
  if (auto at = text.find(kExpanded); at != std::string_view::npos) {
    auto size = text.substr(at + kExpanded.size());
    return std::string(size.substr(0, size.find(')')));
  }
  return std::string(text);
}

UndoLog::UndoLog(std::string dir, std::vector<std::string> log_dirs)
    : dir_(std::move(dir)), log_dirs_(std::move(log_dirs)) {}

UndoLog::UndoLog(UndoLog&& o) noexcept
    : dir_(std::move(o.dir_)),
      log_dirs_(std::move(o.log_dirs_)),
      steps_(std::move(o.steps_)),
      journal_(std::move(o.journal_)),
      journal_fd_(std::move(o.journal_fd_)) {
  o.steps_.clear();
  o.journal_.clear();
}

bool UndoLog::has(const std::string& rel) const {
  struct stat st;
  return stat((dir_ + "/" + rel).c_str(), &st) == 0;
}

Result<std::string> UndoLog::read(const std::string& rel) const {
  return read_file(dir_ + "/" + rel);
}

Status UndoLog::write(const std::string& rel, const std::string& text) const {
  return write_control(dir_ + "/" + rel, text, false, log_dirs_);
}

Status UndoLog::append(const std::string& rel, const std::string& text) const {
  return write_control(dir_ + "/" + rel, text, true, log_dirs_);
}

Status UndoLog::set(const std::string& rel, const std::string& value, std::string* before) {
  auto text = read(rel);
  if (!text) return Error{text.error().err, "no such control file", dir_ + "/" + rel, {}};
  std::string was = current_value(*text);
  if (before) *before = was;
  return change(rel, value, false, was, false);
}

Status UndoLog::change(const std::string& rel, const std::string& text, bool append,
                       const std::string& undo_text, bool undo_append) {
  auto s = append ? this->append(rel, text) : write(rel, text);
  if (!s) return s;
  steps_.push_back({rel, undo_text, undo_append});
  if (journal_fd_.valid()) {
    // One line a step: "a" or "w", the path, the text (control-file texts
    // are one line).
    std::string line = std::string(undo_append ? "a" : "w") + '\t' + rel + '\t' + undo_text + '\n';
    for (size_t at = 0; at < line.size();) {
      ssize_t n = ::write(journal_fd_.get(), line.data() + at, line.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;  // the journal is a safety net: the change stands
      at += static_cast<size_t>(n);
    }
  }
  return {};
}

size_t UndoLog::count_pushed(const std::string& suffix) const {
  size_t n = 0;
  for (const auto& s : steps_)
    n += s.rel.size() >= suffix.size() &&
         s.rel.compare(s.rel.size() - suffix.size(), suffix.size(), suffix) == 0;
  return n;
}

void UndoLog::undo() {
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    auto s = write_control(dir_ + "/" + it->rel, it->text, it->append, log_dirs_);
    if (!s) std::cerr << "tracekit: cleanup: " << s.error().str() << "\n";
  }
  steps_.clear();
  if (!journal_.empty()) {
    ::unlink(journal_.c_str());
    // Its directory too, when no killed run left a journal there: only the
    // lock's holder keeps one, so no other can be being made.
    if (auto slash = journal_.rfind('/'); slash != std::string::npos && slash > 0)
      ::rmdir(journal_.substr(0, slash).c_str());
    journal_.clear();
  }
  journal_fd_ = Fd();
}

Status UndoLog::keep_journal(const std::string& path) {
  auto fd = create_exclusive(path, 0600);
  if (!fd && fd.error().err == EEXIST) {
    // A dead run with our PID left it (we own the directory).
    ::unlink(path.c_str());
    fd = create_exclusive(path, 0600);
  }
  if (!fd) return Error{fd.error().err, "cannot write the undo journal", path, {}};
  journal_ = path;
  journal_fd_ = std::move(*fd);
  return {};
}

namespace {

// Whether a journal's path stays inside the tracing directory.
bool inside(std::string_view rel) {
  if (rel.empty() || rel[0] == '/') return false;
  for (std::string_view part : split(rel, '/'))
    if (part == ".." || part.empty()) return false;
  for (char c : rel)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  return true;
}

constexpr size_t kMaxJournalBytes = 1 << 20;

}  // namespace

size_t replay_journal(const std::string& path, const std::string& tracing_dir) {
  struct stat st {};
  auto fd = open_regular(path, &st);
  if (!fd) {
    // Something that is no journal of ours: gone all the same, unread.
    if (fd.error().err != ENOENT) ::unlink(path.c_str());
    return 0;
  }
  size_t done = 0;
  if (untrusted_reason(st, geteuid()).empty()) {
    bool cut = false;
    auto text = read_at_most(fd->get(), kMaxJournalBytes, &cut);
    if (text && !cut) {
      auto lines = split(*text, '\n');
      for (size_t i = lines.size(); i-- > 0;) {
        auto fields = split(lines[i], '\t');
        if (fields.size() < 3 || (fields[0] != "a" && fields[0] != "w") || !inside(fields[1]))
          continue;
        // The text may hold tabs itself: it is everything after the path.
        auto text_at = fields[0].size() + 1 + fields[1].size() + 1;
        std::string undo(lines[i].substr(text_at));
        if (write_control(tracing_dir + "/" + std::string(fields[1]), undo, fields[0] == "a", {}))
          ++done;
      }
    }
  }
  ::unlink(path.c_str());
  return done;
}

}  // namespace tracekit::tracefs
