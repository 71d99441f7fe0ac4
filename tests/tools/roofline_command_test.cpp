// `lowbit roofline` as a user runs it: the bandwidth probe, the compute table
// and, with --chain, every family's GEMVs next to a plain read taken in turn.
#include <gtest/gtest.h>

#include <regex>

#include "lowbit_cli.h"

namespace lowbit {
namespace {

using testing::Outcome;
using testing::run_lowbit;

int count_matches(const std::string& text, const std::regex& re) {
  return static_cast<int>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

TEST(RooflineCommand, ChainPrintsEveryFamilyBesideAPlainRead) {
  const Outcome o = run_lowbit("roofline -t 2 --shapes tiny --chain -r 2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("thread pool, 2 threads: empty run_on_all"), std::string::npos) << o.out;
  // One plain-read row per core count, with a GB/s figure per shape (tiny: 4 shapes).
  EXPECT_EQ(count_matches(o.out, std::regex(R"(\| plain read, alongside \| [12] \| [0-9.]+ \| \| \| \|( [0-9.]+ \|){4}\n)")), 2)
      << o.out;
  // C per family, with the one-token path it was timed on (int2 and int1 pair on AVX-512).
  for (const char* family : {"q8_0", "int2", "int1"})
    EXPECT_EQ(count_matches(o.out, std::regex(std::string(R"(\| )") + family +
                                              R"(/[a-z0-9-]+ \| (pairs|one block at a time) \|( [0-9.]+ \|){4}\n)")),
              1)
        << family << "\n" << o.out;
  // Each family at 1 and 2 cores: bound, what limits it, and GB/s (% of bound) per shape.
  for (const char* family : {"q8_0", "int2", "int1"}) {
    const std::regex row(std::string(R"(\| )") + family +
                         R"(/[a-z0-9-]+ \| [12] \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| (memory|compute) \|( [0-9.]+ \([0-9]+%\) \|){4}\n)");
    EXPECT_EQ(count_matches(o.out, row), 2) << family << "\n" << o.out;
  }
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(int2 GB/s as % of q8_0 GB/s at 2 threads:( [0-9]+x[0-9]+ [0-9]+%){4})")))
      << o.out;
}

TEST(RooflineCommand, UnknownShapesFailClearly) {
  const Outcome o = run_lowbit("roofline -t 1 --shapes no-such-model");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("no-such-model"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace lowbit
