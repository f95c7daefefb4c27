// sbc-sipcheck: checks captured SIP messages (one raw message per file, or stdin) and
// prints the verdict the proxy would reach; with --config and --trunk, what the header and
// number rules make of them (app/sipcheck_rules.h). Tool only (main thread).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "app/sipcheck_report.h"
#include "app/sipcheck_rules.h"

namespace {

constexpr const char* usage =
    "usage: sbc-sipcheck [--json] FILE...\n"
    "       sbc-sipcheck [--json] -        (read one message from stdin)\n"
    "       sbc-sipcheck [--json] --config sbc.toml --trunk NAME [--peer NAME] FILE...\n"
    "\n"
    "Checks SIP messages, one raw message per file exactly as captured (a UDP payload),\n"
    "and prints for each: valid or not, request or response, method or status, Call-ID,\n"
    "top Via branch, the problems found, and the proxy action (forward, respond NNN, drop).\n"
    "\n"
    "With --config, shows instead what the header and number rules of sbc.toml make of\n"
    "each request: the inbound rules of the trunk it arrives on (--trunk), then the\n"
    "outbound rules of the region and trunk of the peer it goes to (--peer, else the\n"
    "first static peer of the route the rewritten request takes), each rule marked\n"
    "hit, failed or - (not applied), and the message after each step. Test a rule\n"
    "set with it before loading it.\n"
    "\n"
    "  --json            one JSON object per line with keys file, valid, kind, action, errors, ...\n"
    "                    (with --config: file, trunk, inbound, outbound)\n"
    "  --config FILE     sbc.toml whose rules to apply (refused with its errors, exit 2)\n"
    "  --trunk NAME      the [[trunk]] the message arrives on (with --config; unknown: exit 2)\n"
    "  --peer NAME       the peer it goes to: a static peer's name or REGION/A.B.C.D:PORT\n"
    "  --help            this text\n"
    "\n"
    "Examples:\n"
    "  sbc-sipcheck invite.txt                       is this message valid, what would sbcd do\n"
    "  sbc-sipcheck --json captured/*.sip            one JSON line per file\n"
    "  sbc-sipcheck --config sbc.toml --trunk carrier invite.txt   the rules' effect on it\n"
    "\n"
    "Exit status: 0 all messages valid, 1 some invalid or unreadable, 2 usage error\n"
    "(or, with --config, a refused config, an unknown trunk or peer).\n";

// Reads at most sbc::sip::sipcheck_max_input + 1 bytes; `size` gets the bytes available.
bool read_fd(int fd, std::string& data, std::size_t& size, std::string& why) {
  constexpr std::size_t cap = sbc::sip::sipcheck_max_input + 1;
  data.assign(cap, '\0');
  std::size_t got = 0;
  while (got < cap) {
    ssize_t n = ::read(fd, data.data() + got, cap - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      why = std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  data.resize(got);
  size = got;
  struct stat st {};
  if (got == cap && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
    size = static_cast<std::size_t>(st.st_size);
  return true;
}

sbc::sip::file_report check_path(const std::string& path) {
  std::string data;
  std::string why;
  std::size_t size = 0;
  if (path == "-") {
    if (!read_fd(0, data, size, why)) return sbc::sip::unreadable_report("-", why);
    return sbc::sip::check_message("-", data, size);
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return sbc::sip::unreadable_report(path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return sbc::sip::unreadable_report(path, "is a directory");
  }
  bool ok = read_fd(fd, data, size, why);
  ::close(fd);
  if (!ok) return sbc::sip::unreadable_report(path, why);
  return sbc::sip::check_message(path, data, size);
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  bool options_done = false;
  std::vector<std::string> files;
  sbc::app::rules_check_options rules;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!options_done && (a == "--help" || a == "-h")) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (!options_done && (a == "--config" || a == "--trunk" || a == "--peer")) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "sbc-sipcheck: %s needs a value\n%s", a.c_str(), usage);
        return 2;
      }
      (a == "--config" ? rules.config : a == "--trunk" ? rules.trunk : rules.peer) = argv[++i];
    } else if (!options_done && a == "--json") {
      json = true;
    } else if (!options_done && a == "--") {
      options_done = true;
    } else if (!options_done && a.size() > 1 && a[0] == '-') {
      std::fprintf(stderr, "sbc-sipcheck: unknown option '%s'\n%s", a.c_str(), usage);
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "sbc-sipcheck: no input files\n%s", usage);
    return 2;
  }
  if (!rules.config.empty() || !rules.trunk.empty() || !rules.peer.empty()) {
    if (rules.config.empty() || rules.trunk.empty()) {
      std::fprintf(stderr, "sbc-sipcheck: --config and --trunk go together\n%s", usage);
      return 2;
    }
    rules.json = json;
    return sbc::app::check_rules(rules, files);
  }
  bool all_valid = true;
  for (const std::string& f : files) {
    sbc::sip::file_report r = check_path(f);
    all_valid = all_valid && r.valid;
    std::string out = json ? sbc::sip::render_json(r) + "\n" : sbc::sip::render_text(r);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return all_valid ? 0 : 1;
}
