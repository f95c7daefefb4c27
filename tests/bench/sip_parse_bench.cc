// Parse throughput of the sbc SIP parser against libosip2's osip_message_parse on the
// same realistic messages (one call plus an OPTIONS probe), in one process, one core.
// Benchmark only (main thread).
//
//   sip_parse_bench [--reps N] [--min-ms MS] [--only NAME]
//
// --only NAME parses one message with sbc's parser alone, for a profiler (perf record).
//
// Each cell is the median over N repetitions of a timed loop of at least MS ms.
#include <osipparser2/osip_message.h>
#include <osipparser2/osip_parser.h>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "sip-fastpath/sip_message.h"
#include "sip-fastpath/sip_verdict.h"
#include "tests/unit/sip_test_messages.h"

namespace {

volatile uint64_t sink = 0;

// CPU time of this thread: the machine is shared, and time spent descheduled is not
// parse time.
double thread_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <typename F>
double run_ns(double min_ms, F& once) {
  uint64_t iters = 0;
  const double start = thread_ns();
  double elapsed = 0;
  do {
    for (int k = 0; k < 64; ++k) once();
    iters += 64;
    elapsed = thread_ns() - start;
  } while (elapsed < min_ms * 1e6);
  return elapsed / static_cast<double>(iters);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs the candidates in turn, repetition after repetition, so that a change in load
// on the machine affects all of them alike; returns the median of each.
template <typename A, typename B, typename C>
void interleaved(int reps, double min_ms, A& a, B& b, C& c, double& ra, double& rb, double& rc) {
  std::vector<double> sa;
  std::vector<double> sb;
  std::vector<double> sc;
  for (int r = 0; r < reps; ++r) {
    sa.push_back(run_ns(min_ms, a));
    sb.push_back(run_ns(min_ms, b));
    sc.push_back(run_ns(min_ms, c));
  }
  ra = median(sa);
  rb = median(sb);
  rc = median(sc);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 9;
  double min_ms = 40;
  const char* only = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--min-ms" && i + 1 < argc) {
      min_ms = std::max(1.0, std::atof(argv[++i]));
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: sip_parse_bench [--reps N] [--min-ms MS] [--only NAME]\n"
                   "  --only NAME  parse message NAME (INVITE+SDP, 100, 180, 200+SDP, ACK, BYE, OPTIONS)\n"
                   "               with sbc's parser alone for --min-ms x --reps ms, for a profiler\n");
      return 2;
    }
  }
  if (only != nullptr) {
    auto m = std::make_unique<sbc::sip::message>();
    for (const auto& t : sbc::sip::testdata::call) {
      if (t.name != only) continue;
      auto once = [&] {
        sbc::sip::parse(t.text, *m);
        sink = sink + m->header_count + m->errors.bits;
      };
      const double ns = run_ns(min_ms * reps, once);
      std::printf("%s: sbc_ns=%.1f\n", only, ns);
      return 0;
    }
    std::fprintf(stderr, "sip_parse_bench: no message %s\n", only);
    return 2;
  }
  if (parser_init() != 0) {
    std::fprintf(stderr, "sip_parse_bench: osip parser_init failed\n");
    return 1;
  }
  auto m = std::make_unique<sbc::sip::message>();

  std::printf("%-12s %6s %10s %12s %10s %12s %12s %8s\n", "message", "bytes", "sbc_ns",
              "sbc_msg/s", "sbc+v_ns", "osip_ns", "osip_msg/s", "ratio");
  double sum_sbc = 0;
  double sum_sbcv = 0;
  double sum_osip = 0;
  for (const auto& t : sbc::sip::testdata::call) {
    std::string_view text = t.text;
    // Both parsers must accept every message, or the comparison means nothing.
    if (sbc::sip::parse(text, *m) != sbc::sip::error::none) {
      std::fprintf(stderr, "sip_parse_bench: sbc rejects %s: %s\n", std::string(t.name).c_str(),
                   std::string(sbc::sip::error_name(m->first_error)).c_str());
      return 1;
    }
    {
      osip_message_t* om = nullptr;
      osip_message_init(&om);
      int rc = osip_message_parse(om, text.data(), text.size());
      osip_message_free(om);
      if (rc != 0) {
        std::fprintf(stderr, "sip_parse_bench: osip rejects %s\n", std::string(t.name).c_str());
        return 1;
      }
    }
    auto sbc_once = [&] {
      sbc::sip::parse(text, *m);
      sink = sink + m->header_count + m->errors.bits;
    };
    auto sbcv_once = [&] {
      sbc::sip::parse(text, *m);
      sbc::sip::verdict v = sbc::sip::proxy_verdict(*m);
      sink = sink + m->header_count + static_cast<uint64_t>(v.act);
    };
    auto osip_once = [&] {
      osip_message_t* om = nullptr;
      osip_message_init(&om);
      int rc = osip_message_parse(om, text.data(), text.size());
      sink = sink + static_cast<uint64_t>(rc);
      osip_message_free(om);
    };
    double sbc_ns = 0;
    double sbcv_ns = 0;
    double osip_ns = 0;
    interleaved(reps, min_ms, sbc_once, sbcv_once, osip_once, sbc_ns, sbcv_ns, osip_ns);
    sum_sbc += sbc_ns;
    sum_sbcv += sbcv_ns;
    sum_osip += osip_ns;
    std::printf("%-12s %6zu %10.1f %12.0f %10.1f %12.1f %12.0f %8.1f\n",
                std::string(t.name).c_str(), text.size(), sbc_ns, 1e9 / sbc_ns, sbcv_ns, osip_ns,
                1e9 / osip_ns, osip_ns / sbc_ns);
  }
  const double n = static_cast<double>(sbc::sip::testdata::call.size());
  const double sbc_avg = sum_sbc / n;
  const double sbcv_avg = sum_sbcv / n;
  const double osip_avg = sum_osip / n;
  std::printf("%-12s %6s %10.1f %12.0f %10.1f %12.1f %12.0f %8.1f\n", "mean", "", sbc_avg,
              1e9 / sbc_avg, sbcv_avg, osip_avg, 1e9 / osip_avg, osip_avg / sbc_avg);
  std::printf("(ns per message: median of %d interleaved runs of >= %.0f ms thread CPU time;"
              " sbc+v = parse + proxy verdict with the full grammar check;"
              " ratio = osip_ns / sbc_ns)\n",
              reps, min_ms);
  std::printf("sip_parse: sbc_ns=%.1f osip_ns=%.1f ratio=%.1f\n", sbc_avg, osip_avg,
              osip_avg / sbc_avg);
  return 0;
}
