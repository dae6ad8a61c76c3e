#include "tracefs/undo_log.hpp"

#include <sys/stat.h>

#include <unistd.h>

#include <fstream>
#include <iostream>

#include "tracefs/instance.hpp"
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
      journal_(std::move(o.journal_)) {
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
  if (!journal_.empty()) {
    // One line a step: "a" or "w", the path, the text (control-file texts
    // are one line).
    std::ofstream j(journal_, std::ios::app);
    j << (undo_append ? 'a' : 'w') << '\t' << rel << '\t' << undo_text << '\n';
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
  if (!journal_.empty()) ::unlink(journal_.c_str());
}

Status UndoLog::keep_journal(const std::string& path) {
  std::ofstream j(path, std::ios::trunc);
  j << dir_ << '\n';
  j.flush();
  if (!j) return Error::from_errno("cannot write the undo journal", path);
  journal_ = path;
  return {};
}

size_t replay_journal(const std::string& path) {
  auto text = read_file(path);
  if (!text) return 0;
  auto lines = split(*text, '\n');
  size_t done = 0;
  if (!lines.empty()) {
    const std::string dir(lines[0]);
    for (size_t i = lines.size(); i-- > 1;) {
      auto fields = split(lines[i], '\t');
      if (fields.size() < 3 || (fields[0] != "a" && fields[0] != "w")) continue;
      // The text may hold tabs itself: it is everything after the path.
      auto text_at = fields[0].size() + 1 + fields[1].size() + 1;
      std::string undo(lines[i].substr(text_at));
      if (write_control(dir + "/" + std::string(fields[1]), undo, fields[0] == "a", {}))
        ++done;
    }
  }
  ::unlink(path.c_str());
  return done;
}

}  // namespace tracekit::tracefs
