// MappingSet on made-up files: how added mappings replace each other, and
// how an address goes through a mapping and its file's segments to a
// function. The files are marked as read already, so nothing is opened.
#include "symbols/mapping_set.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tracekit::symbols {
namespace {

// A file whose bytes [0x1000, 0x4000) load at ELF address 0x401000, with
// functions f at 0x401100 and g at 0x402000.
std::shared_ptr<MappedFile> made_up_file(ino_t ino, std::vector<uint8_t> build_id = {1, 2, 3, 4}) {
  auto table = std::make_shared<FunctionTable>();
  table->add(0x401100, 0x401200, true, "f", 0);
  table->add(0x402000, 0x402100, true, "g", 0);
  table->finish();
  auto file = std::make_shared<MappedFile>();
  file->key = FileKey{1, ino, 0x4000, 0};
  file->name = "/made/up/" + std::to_string(ino);
  file->tried = true;
  file->loaded =
      LoadedFile{table, Segments({{0x1000, 0x3000, 0x401000, true}}), std::move(build_id)};
  return file;
}

Mapping mapping(uint64_t start, uint64_t end, uint64_t pgoff, std::shared_ptr<MappedFile> file) {
  Mapping m;
  m.start = start;
  m.end = end;
  m.pgoff = pgoff;
  m.file = std::move(file);
  return m;
}

struct Span {
  uint64_t start, end, pgoff;
  bool operator==(const Span&) const = default;
};

std::vector<Span> spans(const MappingSet& set) {
  std::vector<Span> out;
  for (const Mapping& m : set.mappings()) out.push_back({m.start, m.end, m.pgoff});
  return out;
}

class SymbolsMappingsTest : public testing::Test {
 protected:
  FunctionTables tables;
  MappedFiles files{tables};
  MappingSet set;
};

TEST_F(SymbolsMappingsTest, AddressGoesThroughFileOffsetToFunction) {
  auto file = made_up_file(7);
  // The file's bytes from 0x1000 on, at 0x7f0000000000.
  set.add(mapping(0x7f0000000000, 0x7f0000003000, 0x1000, file));
  auto r = set.lookup(0x7f0000000110, files);  // file offset 0x1110: f + 0x10
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "f");
  EXPECT_EQ(r->offset, 0x10u);
  EXPECT_EQ(r->module, "/made/up/7");
  auto g = set.lookup(0x7f0000001004, files);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->name, "g");
  EXPECT_EQ(g->offset, 4u);
  EXPECT_FALSE(set.lookup(0x7f0000000000, files).has_value());  // no function there
  EXPECT_FALSE(set.lookup(0x7f0000003000, files).has_value());  // past the mapping
  EXPECT_FALSE(set.lookup(0x7effffffffff, files).has_value());  // below it
}

TEST_F(SymbolsMappingsTest, BuildIdOfTheRecordMustMatchTheFile) {
  const struct {
    const char* what;
    std::vector<uint8_t> id;
    bool resolves;
  } cases[] = {
      {"none given", {}, true},
      {"the same", {1, 2, 3, 4}, true},
      {"another", {1, 2, 3, 5}, false},
      {"a prefix", {1, 2, 3}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    MappingSet s;
    Mapping m = mapping(0x10000, 0x13000, 0x1000, made_up_file(7));
    m.build_id_size = static_cast<uint8_t>(c.id.size());
    std::copy(c.id.begin(), c.id.end(), m.build_id.begin());
    s.add(std::move(m));
    EXPECT_EQ(s.lookup(0x10110, files).has_value(), c.resolves);
  }
}

TEST_F(SymbolsMappingsTest, UnreadableFilesAndNoFilesResolveNothing) {
  auto unreadable = made_up_file(7);
  unreadable->loaded.reset();
  set.add(mapping(0x10000, 0x13000, 0x1000, unreadable));
  set.add(mapping(0x20000, 0x23000, 0x1000, nullptr));
  EXPECT_FALSE(set.lookup(0x10110, files).has_value());
  EXPECT_FALSE(set.lookup(0x20110, files).has_value());
}

// A newer mapping hides what it overlaps; what is left of an older one keeps
// its file offsets.
TEST_F(SymbolsMappingsTest, NewerMappingsCutOlderOnes) {
  auto file = made_up_file(7);
  set.add(mapping(0x10000, 0x13000, 0x1000, file));
  set.add(mapping(0x20000, 0x21000, 0, nullptr));
  // Over the middle page of the first: split in two.
  set.add(mapping(0x11000, 0x12000, 0, nullptr));
  EXPECT_EQ(spans(set), (std::vector<Span>{{0x10000, 0x11000, 0x1000},
                                           {0x11000, 0x12000, 0},
                                           {0x12000, 0x13000, 0x3000},
                                           {0x20000, 0x21000, 0}}));
  EXPECT_FALSE(set.lookup(0x11004, files).has_value());  // g is hidden
  auto f = set.lookup(0x10110, files);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "f");
  // Straddling two: each keeps its outer part.
  set.add(mapping(0x12800, 0x20800, 0x2000, file));
  EXPECT_EQ(spans(set), (std::vector<Span>{{0x10000, 0x11000, 0x1000},
                                           {0x11000, 0x12000, 0},
                                           {0x12000, 0x12800, 0x3000},
                                           {0x12800, 0x20800, 0x2000},
                                           {0x20800, 0x21000, 0x800}}));
  auto g = set.lookup(0x12804, files);  // file offset 0x2004: g + 4
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->name, "g");
  EXPECT_EQ(g->offset, 4u);
}

// A file whose mappings are all covered is still reported: names from its
// table may be held.
TEST_F(SymbolsMappingsTest, FilesOfReplacedMappingsAreKept) {
  set.add(mapping(0x10000, 0x13000, 0x1000, made_up_file(7)));
  set.add(mapping(0x20000, 0x21000, 0x1000, made_up_file(8)));
  set.add(mapping(0x10000, 0x13000, 0x1000, made_up_file(9)));
  set.add(mapping(0x0, 0x100000, 0, nullptr));  // covers all
  EXPECT_EQ(spans(set), (std::vector<Span>{{0x0, 0x100000, 0}}));
  std::vector<FileKey> keys;
  set.files(keys);
  std::vector<ino_t> inos;
  for (const FileKey& k : keys) inos.push_back(k.ino);
  std::sort(inos.begin(), inos.end());
  EXPECT_EQ(inos, (std::vector<ino_t>{7, 8, 9}));
}

}  // namespace
}  // namespace tracekit::symbols
