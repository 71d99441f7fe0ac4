// `lowbit bench` as a user runs it: a markdown table with one row per
// (model, kernel, threads, test), and clear errors for bad options.
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures.h"
#include "lowbit_cli.h"

namespace lowbit {
namespace {

using testing::Outcome;
using testing::quote;
using testing::run_lowbit;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(BenchCommand, PrintsOneRowPerKernelThreadsAndTest) {
  const std::string model = testing::temp_path("bench-tiny.gguf");
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  const Outcome o = run_lowbit("bench -m " + quote(model) + " -t 1,2 -p 8 -n 4 -r 2 --kernel auto,ref");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("| model | size | kernel | threads | test | tok/s |"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("read bandwidth, 2 threads:"), std::string::npos) << o.out;
  // 2 kernels x 2 thread counts x 2 tests.
  EXPECT_EQ(count(o.out, "| bench-tiny.gguf |"), 8) << o.out;
  EXPECT_EQ(count(o.out, "| pp8 |"), 4) << o.out;
  EXPECT_EQ(count(o.out, "| tg4 |"), 4) << o.out;
  EXPECT_NE(o.out.find("| ref: ref |"), std::string::npos) << o.out;
  // tok/s as "mean ± stddev", weight bytes, the roofline share (of the mean of the probes
  // before and after the test, both shown) and a peak RSS.
  const std::regex row(R"(\| tg4 \| [0-9.]+ ± [0-9.]+ \| [0-9.]+ GB \| [0-9]+% of ([0-9]+) GB/s \(([0-9]+) before, ([0-9]+) after\) \| [0-9.]+ GB \|)");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(o.out, m, row)) << o.out;
  // The mean lies between the two probes (each printed rounded).
  const int mean = std::stoi(m[1]), before = std::stoi(m[2]), after = std::stoi(m[3]);
  EXPECT_GE(mean, std::min(before, after) - 1) << m[0];
  EXPECT_LE(mean, std::max(before, after) + 1) << m[0];
  EXPECT_GT(std::min(before, after), 0) << m[0];
}

// -d: every test starts that many positions into the context, named as llama-bench names it.
TEST(BenchCommand, DepthStartsEachTestIntoTheContext) {
  const std::string model = testing::temp_path("bench-tiny-depth.gguf");
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  const Outcome o = run_lowbit("bench -m " + quote(model) + " -t 2 -p 8 -n 4 -d 40 -r 2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("-d 40"), std::string::npos) << o.out;
  EXPECT_EQ(count(o.out, "| pp8 @ d40 |"), 1) << o.out;
  EXPECT_EQ(count(o.out, "| tg4 @ d40 |"), 1) << o.out;
  const Outcome bad = run_lowbit("bench -m " + quote(model) + " -d -1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("-d"), std::string::npos) << bad.err;
}

// --interleave: every (model, kernel) pair loaded at once, runs alternated in
// rounds; each row's tok/s against the first row's in the same rounds.
TEST(BenchCommand, InterleaveComparesPairsRoundByRound) {
  const std::string model = testing::temp_path("bench-tiny-interleave.gguf");
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  const Outcome o = run_lowbit("bench -m " + quote(model) + " -t 2 -p 8 -n 4 -r 3 --kernel auto,ref --interleave");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("| peak RSS | vs first |"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("--interleave"), std::string::npos) << o.out;
  // Two pairs x two tests; the first pair is the reference of its rounds.
  const std::regex first(R"(\| auto: [^|]+ \| 2 \| (pp8|tg4) \| [^|]+ \| [^|]+ \| [^|]+ \| [0-9.]+ GB \| 1\.000 \(1\.000-1\.000\) \|)");
  const std::regex second(R"(\| ref: ref \| 2 \| (pp8|tg4) \| [^|]+ \| [^|]+ \| [^|]+ \| [0-9.]+ GB \| ([0-9.]+) \(([0-9.]+)-([0-9.]+)\) \|)");
  EXPECT_EQ(std::distance(std::sregex_iterator(o.out.begin(), o.out.end(), first), std::sregex_iterator()), 2) << o.out;
  int rows = 0;
  for (auto it = std::sregex_iterator(o.out.begin(), o.out.end(), second); it != std::sregex_iterator(); ++it, ++rows) {
    const double median = std::stod((*it)[2]), low = std::stod((*it)[3]), high = std::stod((*it)[4]);
    EXPECT_GT(low, 0.0) << (*it)[0];
    EXPECT_LE(low, median) << (*it)[0];
    EXPECT_LE(median, high) << (*it)[0];
  }
  EXPECT_EQ(rows, 2) << o.out;
  // One pair has nothing to compare; --profile times one model at a time.
  Outcome bad = run_lowbit("bench -m " + quote(model) + " -p 8 -n 4 --interleave");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--interleave"), std::string::npos) << bad.err;
  bad = run_lowbit("bench -m " + quote(model) + " -p 8 -n 4 --kernel auto,ref --interleave --profile");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--profile"), std::string::npos) << bad.err;
}

// One CSV line's fields (RFC 4180 quoting: "a,b" and "" inside quotes).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

// -o json / jsonl / csv: records for scripts, the same figures as the table,
// and nothing else on stdout.
TEST(BenchCommand, WritesRecordsAsJsonJsonlAndCsv) {
  const std::string model = testing::temp_path("bench-tiny,records.gguf");  // a comma: CSV quotes the cell
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  const auto expect_record = [](const nlohmann::json& r, const std::string& test) {
    EXPECT_EQ(r.at("model").get<std::string>(), "bench-tiny,records.gguf") << r;
    EXPECT_EQ(r.at("test").get<std::string>(), test) << r;
    EXPECT_EQ(r.at("threads").get<int>(), 2) << r;
    EXPECT_EQ(r.at("kernel").get<std::string>(), "auto") << r;
    const auto samples = r.at("samples_tok_s").get<std::vector<double>>();
    ASSERT_EQ(samples.size(), 3u) << r;
    double sum = 0;
    for (const double s : samples) {
      EXPECT_GT(s, 0) << r;
      sum += s;
    }
    EXPECT_NEAR(r.at("tok_s_mean").get<double>(), sum / 3, 1e-9 * sum) << r;
    EXPECT_NEAR(r.at("roofline_share").get<double>(), r.at("tok_s_mean").get<double>() / r.at("roofline_tok_s").get<double>(),
                1e-12)
        << r;
    EXPECT_GT(r.at("bandwidth_before_gbps").get<double>(), 0) << r;
    EXPECT_GT(r.at("weight_bytes_per_token").get<int64_t>(), 0) << r;
    EXPECT_GT(r.at("peak_rss_bytes").get<int64_t>(), 0) << r;
  };
  const std::string base = "bench -m " + quote(model) + " -t 2 -p 8 -n 4 -r 3";

  Outcome o = run_lowbit(base + " -o json --profile");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const nlohmann::json all = nlohmann::json::parse(o.out);  // stdout is the array alone
  ASSERT_EQ(all.size(), 2u) << o.out;
  expect_record(all[0], "pp8");
  expect_record(all[1], "tg4");
  ASSERT_TRUE(all[1].contains("profile")) << o.out;
  EXPECT_EQ(all[1]["profile"][1]["stage"].get<std::string>(), "q, k, v matmuls") << o.out;
  EXPECT_TRUE(all[1]["profile"][1].contains("weight_gbps")) << o.out;
  EXPECT_NE(o.err.find("read bandwidth, 2 threads:"), std::string::npos) << "the probe goes to stderr: " << o.err;

  o = run_lowbit(base + " -o jsonl");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream lines(o.out);
  std::vector<nlohmann::json> records;
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(records.size(), 2u) << o.out;
  expect_record(records[0], "pp8");
  expect_record(records[1], "tg4");

  o = run_lowbit(base + " -o csv");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream csv(o.out);
  std::string header, row;
  ASSERT_TRUE(std::getline(csv, header)) << o.out;
  EXPECT_EQ(header.rfind("cpu,hardware_threads,date,model,", 0), 0u) << header;
  const std::vector<std::string> names = csv_fields(header);
  const auto model_at = std::find(names.begin(), names.end(), "model") - names.begin();
  int rows = 0;
  while (std::getline(csv, row)) {
    ++rows;
    const std::vector<std::string> fields = csv_fields(row);
    ASSERT_EQ(fields.size(), names.size()) << row;
    EXPECT_EQ(fields[static_cast<size_t>(model_at)], "bench-tiny,records.gguf") << row;
  }
  EXPECT_EQ(rows, 2) << o.out;

  o = run_lowbit(base + " -o xml");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("-o xml"), std::string::npos) << o.err;
  o = run_lowbit(base + " -o csv --profile");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("--profile"), std::string::npos) << o.err;
}

TEST(BenchCommand, BadOptionsFailClearly) {
  const std::string model = testing::temp_path("bench-tiny-bad.gguf");
  ASSERT_EQ(run_lowbit("gen-model --shape tiny -o " + quote(model)).exit_code, 0);
  Outcome o = run_lowbit("bench -m " + quote(model) + " -t 1,x");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("'x'"), std::string::npos) << o.err;
  o = run_lowbit("bench -m " + quote(model) + " -p 0 -n 0");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("-p"), std::string::npos) << o.err;
  o = run_lowbit("bench -m /nonexistent/m.gguf -p 1 -n 1");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("/nonexistent/m.gguf"), std::string::npos) << o.err;
  o = run_lowbit("bench -m " + quote(model) + " --kernel nosuch");
  EXPECT_NE(o.exit_code, 0);
  EXPECT_NE(o.err.find("nosuch"), std::string::npos) << o.err;
}

// bench-gemv's two timings: single cold calls, and copies back to back (--chain).
TEST(BenchGemvCommand, TimesSingleCallsAndChains) {
  for (const std::string mode : {"", " --chain"}) {
    const Outcome o = run_lowbit("bench-gemv --shapes 1536x1536 --kernel i2s -t 1 -r 2" + mode);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_NE(o.out.find(mode.empty() ? "timing: single calls" : "timing: copies of each matrix"), std::string::npos)
        << o.out;
    // us/call, GB/s and the share of the read bandwidth, all numbers.
    EXPECT_TRUE(std::regex_search(
        o.out, std::regex(R"(\| bitnet-large 1536x1536 \| i2s/[a-z0-9-]+ \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9]+% \|)")))
        << o.out;
  }
  const Outcome bad = run_lowbit("bench-gemv --shapes 1536x1536 --kernel nosuch -t 1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("nosuch"), std::string::npos) << bad.err;
}

// --shapes takes any NxK (an output head's shape, which no model list has) as
// "custom", and --type f16 times the float kernel on it; a shape that is
// neither a model nor NxK is refused by name.
TEST(BenchGemvCommand, TimesAnyShapeAndF16Weights) {
  const Outcome o = run_lowbit("bench-gemv --type f16 --shapes 1000x256 --kernel f16 -t 1 -r 2");
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\| custom 1000x256 \| f16/[a-z0-9-]+ \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9]+% \|)")))
      << o.out;
  for (const std::string shape : {"1000y256", "0x256", "bitnet-9b"}) {
    const Outcome bad = run_lowbit("bench-gemv --shapes " + shape + " -t 1");
    EXPECT_NE(bad.exit_code, 0) << shape;
    EXPECT_NE(bad.err.find(shape), std::string::npos) << bad.err;
  }
}

#if LOWBIT_X86_KERNELS  // the 4-bit and k-quant kernels are x86 code
// --type: the block formats' kernels (4-bit groups, and the k-quants' float
// families) at this CPU's x86 level beside ref, the type's name in any case; a type it cannot make
// is refused by name.
TEST(BenchGemvCommand, TimesTheKernelsOfAWeightType) {
  for (const auto& [type, kernel] : std::vector<std::pair<std::string, std::string>>{
           {"q4_0", "q4_0"}, {"iq4_nl", "iq4_nl"}, {"q4_k", "q4_k"}, {"Q6_K", "q6_k"}}) {
    const Outcome o = run_lowbit("bench-gemv --type " + type + " --shapes 640x2560 -t 1 -r 2");
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_TRUE(std::regex_search(o.out, std::regex(R"(\| bitnet-2b4t 640x2560 \| )" + kernel +
                                                    R"(/avx(2|512)[a-z0-9-]* \| 1 \| [0-9.]+ \| [0-9.]+ \| [0-9]+% \| [0-9.]+ \|)")))
        << o.out;
    EXPECT_NE(o.out.find("| ref | 1 |"), std::string::npos) << "ref beside it: " << o.out;
  }
  const Outcome bad = run_lowbit("bench-gemv --type iq2_xxs --shapes 640x2560 -t 1");
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("iq2_xxs"), std::string::npos) << bad.err;
}
#endif

}  // namespace
}  // namespace lowbit
