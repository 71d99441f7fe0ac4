#include "bench_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace lowbit::tools {

namespace {

std::string gb(int64_t bytes) {
  char s[32];
  std::snprintf(s, sizeof s, "%.3f GB", static_cast<double>(bytes) / 1e9);
  return s;
}

double bandwidth_gbps(const BenchRecord& r) { return (r.bandwidth_before_gbps + r.bandwidth_after_gbps) / 2; }
double roofline_share(const BenchRecord& r) { return r.tok_s_mean / r.roofline_tok_s; }

nlohmann::ordered_json to_json(const BenchMachine& machine, const BenchRecord& r) {
  nlohmann::ordered_json j = {{"command", machine.command_line},
                      {"cpu", machine.cpu},
                      {"cpu_features", machine.features},
                      {"hardware_threads", machine.hardware_threads},
                      {"date", machine.date},
                      {"model", r.model},
                      {"model_path", r.model_path},
                      {"model_bytes", r.model_bytes},
                      {"kernel", r.kernel},
                      {"kernels_used", r.kernels_used},
                      {"threads", r.threads},
                      {"test", r.test},
                      {"n_prompt", r.n_prompt},
                      {"n_gen", r.n_gen},
                      {"depth", r.depth},
                      {"sequences", r.sequences},
                      {"tok_s_mean", r.tok_s_mean},
                      {"tok_s_stddev", r.tok_s_stddev},
                      {"samples_tok_s", r.samples_tok_s},
                      {"weight_bytes_per_token", r.weight_bytes_per_token},
                      {"roofline_tok_s", r.roofline_tok_s},
                      {"roofline_share", roofline_share(r)},
                      {"bandwidth_before_gbps", r.bandwidth_before_gbps},
                      {"bandwidth_after_gbps", r.bandwidth_after_gbps},
                      {"peak_rss_bytes", r.peak_rss_bytes}};
  if (r.interleaved) {
    j["vs_first_median"] = r.vs_first_median;
    j["vs_first_q1"] = r.vs_first_q1;
    j["vs_first_q3"] = r.vs_first_q3;
  }
  if (!r.profile.empty()) {
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (const BenchStage& s : r.profile) {
      nlohmann::ordered_json st = {{"stage", s.name}, {"ms_per_token", s.ms_per_token}, {"share", s.share}};
      if (s.reads_weights) {
        st["weight_gbps"] = s.weight_gbps;
        st["read_share"] = s.read_share;
      }
      stages.push_back(std::move(st));
    }
    j["profile"] = std::move(stages);
  }
  return j;
}

// A CSV field: quoted, with quotes doubled, where it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// Numbers as JSON writes them (shortest exact form), so the two formats agree.
std::string csv_number(double v) { return nlohmann::ordered_json(v).dump(); }

std::vector<std::string> csv_header(bool interleave) {
  std::vector<std::string> h = {"cpu", "hardware_threads", "date", "model", "model_path", "model_bytes", "kernel",
                                "kernels_used", "threads", "test", "n_prompt", "n_gen", "depth", "sequences",
                                "tok_s_mean", "tok_s_stddev", "samples_tok_s", "weight_bytes_per_token",
                                "roofline_tok_s", "roofline_share", "bandwidth_before_gbps", "bandwidth_after_gbps",
                                "peak_rss_bytes"};
  if (interleave) h.insert(h.end(), {"vs_first_median", "vs_first_q1", "vs_first_q3"});
  return h;
}

std::vector<std::string> csv_values(const BenchMachine& m, const BenchRecord& r) {
  std::string samples;  // space-separated: one field
  for (const double s : r.samples_tok_s) samples += (samples.empty() ? "" : " ") + csv_number(s);
  std::vector<std::string> v = {m.cpu,
                                std::to_string(m.hardware_threads),
                                m.date,
                                r.model,
                                r.model_path,
                                std::to_string(r.model_bytes),
                                r.kernel,
                                r.kernels_used,
                                std::to_string(r.threads),
                                r.test,
                                std::to_string(r.n_prompt),
                                std::to_string(r.n_gen),
                                std::to_string(r.depth),
                                std::to_string(r.sequences),
                                csv_number(r.tok_s_mean),
                                csv_number(r.tok_s_stddev),
                                samples,
                                std::to_string(r.weight_bytes_per_token),
                                csv_number(r.roofline_tok_s),
                                csv_number(roofline_share(r)),
                                csv_number(r.bandwidth_before_gbps),
                                csv_number(r.bandwidth_after_gbps),
                                std::to_string(r.peak_rss_bytes)};
  if (r.interleaved)
    v.insert(v.end(), {csv_number(r.vs_first_median), csv_number(r.vs_first_q1), csv_number(r.vs_first_q3)});
  return v;
}

void print_csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (const std::string& f : fields) line += (line.empty() ? "" : ",") + csv_field(f);
  std::printf("%s\n", line.c_str());
}

}  // namespace

BenchFormat parse_bench_format(const std::string& name) {
  if (name == "md") return BenchFormat::Markdown;
  if (name == "json") return BenchFormat::Json;
  if (name == "jsonl") return BenchFormat::Jsonl;
  if (name == "csv") return BenchFormat::Csv;
  fail("bench: -o ", name, " is not an output format (md, json, jsonl, csv)");
}

BenchReport::BenchReport(BenchFormat format, BenchMachine machine, bool interleave)
    : format_(format), machine_(std::move(machine)), interleave_(interleave) {}

void BenchReport::begin(const std::vector<int>& threads, const std::vector<double>& bandwidth_gbps) {
  // The records formats keep stdout for data; these lines go to stderr there.
  FILE* out = format_ == BenchFormat::Markdown ? stdout : stderr;
  std::fprintf(out, "lowbit bench: `%s`\n", machine_.command_line.c_str());
  std::fprintf(out, "machine: %s, %d hardware threads (%s); %s\n", machine_.cpu.c_str(), machine_.hardware_threads,
               machine_.features.c_str(), machine_.date.c_str());
  for (size_t i = 0; i < threads.size(); ++i)
    std::fprintf(out, "read bandwidth, %d thread%s: %.1f GB/s\n", threads[i], threads[i] > 1 ? "s" : "", bandwidth_gbps[i]);
  if (format_ == BenchFormat::Markdown) {
    std::printf("\n| model | size | kernel | threads | test | tok/s | weights/token | roofline | peak RSS |%s\n",
                interleave_ ? " vs first |" : "");
    std::printf("|---|---:|---|---:|---|---:|---:|---:|---:|%s\n", interleave_ ? "---:|" : "");
  } else if (format_ == BenchFormat::Csv) {
    print_csv_line(csv_header(interleave_));
  }
  std::fflush(stdout);
}

void BenchReport::add(const BenchRecord& r) {
  switch (format_) {
    case BenchFormat::Markdown:
      markdown_row(r);
      if (!r.profile.empty()) profiles_ += profile_table(r);
      break;
    case BenchFormat::Json: records_.push_back(r); break;
    case BenchFormat::Jsonl: std::printf("%s\n", to_json(machine_, r).dump().c_str()); break;
    case BenchFormat::Csv: print_csv_line(csv_values(machine_, r)); break;
  }
  std::fflush(stdout);
}

void BenchReport::finish() {
  if (format_ == BenchFormat::Json) {
    nlohmann::ordered_json all = nlohmann::ordered_json::array();
    for (const BenchRecord& r : records_) all.push_back(to_json(machine_, r));
    std::printf("%s\n", all.dump(2).c_str());
    return;
  }
  if (format_ != BenchFormat::Markdown) return;
  std::printf("%s", profiles_.c_str());
  std::printf(
      "\nroofline: tok/s as a share of (read bandwidth / weight bytes per token) x tokens per weight pass,\n"
      "with the read bandwidth of that many threads the mean of two probes, one before the test (before\n"
      "the model loaded, for its first) and one right after it; tg tests also\n"
      "count the f16 KV cache each token reads (its average over the test, which -d makes large).\n"
      "tgN xP: P sequences generating together, P tokens per pass over the weights (tok/s counts them all).\n");
  if (interleave_)
    std::printf(
        "--interleave: all models loaded at once (the peak RSS is theirs together); each test's runs in rounds,\n"
        "one run of each per round in a shuffled order; vs first: the median over the rounds of tok/s / the\n"
        "first row's tok/s in the same round (quartiles in brackets).\n");
}

void BenchReport::markdown_row(const BenchRecord& r) {
  const double bw = bandwidth_gbps(r);
  std::printf("| %s | %s | %s | %d | %s | %.2f ± %.2f | %s | %.0f%% of %.0f GB/s (%.0f before, %.0f after) | %s |",
              r.model.c_str(), gb(r.model_bytes).c_str(), r.kernels_used.c_str(), r.threads, r.test.c_str(),
              r.tok_s_mean, r.tok_s_stddev, gb(r.weight_bytes_per_token).c_str(), 100.0 * roofline_share(r),
              bw, r.bandwidth_before_gbps, r.bandwidth_after_gbps, gb(r.peak_rss_bytes).c_str());
  if (r.interleaved) std::printf(" %.3f (%.3f-%.3f) |", r.vs_first_median, r.vs_first_q1, r.vs_first_q3);
  std::printf("\n");
}

// Where the time of a test's timed runs went, per stage of the forward pass.
std::string BenchReport::profile_table(const BenchRecord& r) const {
  std::string out = cat("\nprofile: ", r.model, ", ", r.kernels_used, ", ", r.threads, " thread",
                        r.threads > 1 ? "s, " : ", ", r.test,
                        "\n\n| stage | ms/token | share | weights GB/s | % of read BW |\n|---|---:|---:|---:|---:|\n");
  for (const BenchStage& s : r.profile) {
    char row[256];
    if (s.reads_weights)
      std::snprintf(row, sizeof row, "| %s | %.3f | %.1f%% | %.1f | %.0f%% |\n", s.name.c_str(), s.ms_per_token,
                    100 * s.share, s.weight_gbps, 100 * s.read_share);
    else
      std::snprintf(row, sizeof row, "| %s | %.3f | %.1f%% | | |\n", s.name.c_str(), s.ms_per_token, 100 * s.share);
    out += row;
  }
  return out;
}

}  // namespace lowbit::tools
