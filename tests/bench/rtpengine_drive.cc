// rtp benchmark, rtpengine's side: sets up N calls in a running rtpengine through its ng control
// protocol (bencode over UDP: "offer" then "answer" per call), then sends G.711 20 ms RTP
// (172-byte UDP payload: 12-byte RTP header + 160 bytes of PCMU, a 214-byte Ethernet frame)
// from the callers to the ports rtpengine gave them, round-robin over the calls, and counts
// at the callees' socket what rtpengine relayed. Plain sockets on loopback; no DPDK.
//
// Threads: main (setup, then the sender: sendmmsg in batches of 32, paced to --pps) and one
// receiver (recvmmsg). Both are meant for the CPU that rtpengine is NOT pinned to.
//
// Every caller sends from one socket (127.0.0.1:caller-port) and every callee listens on one
// socket (127.0.0.1:callee-port): rtpengine still keeps one port pair per call and does its
// lookup, latching and forwarding per call; only the benchmark's own socket count is small.
//
// Output: one line per round, `round R: received=N secs=S rtpengine_cpu_s=C mpps_wall=W
// mpps_per_cpu=P sent=X`, where mpps_per_cpu is the packets received divided by the CPU
// seconds rtpengine's threads got in the window (/proc/PID/stat utime+stime), and last
// `rtpengine_mpps=M` (the median of the rounds' mpps_per_cpu). Driven by scripts/bench/rtp.sh.
//
//   rtpengine_drive --ng PORT --pid PID [--flows N] [--rounds N] [--seconds S] [--warmup S]
//                   [--pps N] [--window N] [--caller-port P] [--callee-port P]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#define SBC_BENCH_NO_DPDK
#include "bench_common.h"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr std::size_t rtp_payload = 172;  // 12 RTP + 160 PCMU (20 ms at 8 kHz)
constexpr unsigned batch = 32;

int udp_socket(uint16_t port)
{
    const int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) return -1;
    int buf = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

std::string bstr(const std::string& s) { return std::to_string(s.size()) + ":" + s; }

/// Sends one ng command (a bencoded dictionary of string values) and returns the reply's
/// dictionary text (cookie stripped); empty on timeout.
std::string ng_command(int fd, uint16_t ng_port, const std::string& cookie,
                       const std::vector<std::pair<std::string, std::string>>& kv)
{
    std::string msg = cookie + " d";
    for (const auto& [k, v] : kv) msg += bstr(k) + bstr(v);
    msg += "e";
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    to.sin_port = htons(ng_port);
    for (int attempt = 0; attempt < 5; ++attempt) {
        if (sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) < 0) return {};
        timeval tv{0, 500000};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char buf[8192];
        for (;;) {
            const ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n <= 0) break;
            std::string r(buf, static_cast<std::size_t>(n));
            if (r.compare(0, cookie.size() + 1, cookie + " ") == 0) return r.substr(cookie.size() + 1);
        }
    }
    return {};
}

/// The port of the first m= line of the SDP inside an ng reply; 0 when absent or not "ok".
uint16_t sdp_media_port(const std::string& reply)
{
    if (reply.find("6:result2:ok") == std::string::npos) return 0;
    const auto m = reply.find("m=audio ");
    if (m == std::string::npos) return 0;
    return static_cast<uint16_t>(std::strtoul(reply.c_str() + m + 8, nullptr, 10));
}

std::string sdp(unsigned call, uint16_t port)
{
    return "v=0\r\no=- " + std::to_string(call + 1) + " 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
           "m=audio " + std::to_string(port) + " RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=sendrecv\r\n";
}

/// utime + stime of every thread of `pid`, in seconds.
double process_cpu_s(int pid)
{
    const std::string path = "/proc/" + std::to_string(pid) + "/stat";
    FILE* f = std::fopen(path.c_str(), "r");
    if (f == nullptr) return -1;
    char buf[2048];
    const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    // Fields after the ")" that closes comm: state is field 3; utime and stime are 14 and 15.
    const char* p = std::strrchr(buf, ')');
    if (p == nullptr) return -1;
    unsigned long utime = 0, stime = 0;
    if (std::sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

using sbc::bench::median;

}  // namespace

int main(int argc, char** argv)
{
    unsigned flows = 1000, rounds = 5;
    double seconds = 2, warmup = 1;
    unsigned pps = 1000000, window = 2048;
    uint16_t ng_port = 0, caller_port = 41000, callee_port = 41002;
    int pid = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : "0"; };
        if (a == "--ng") ng_port = static_cast<uint16_t>(std::atoi(next()));
        else if (a == "--pid") pid = std::atoi(next());
        else if (a == "--flows") flows = static_cast<unsigned>(std::atoi(next()));
        else if (a == "--rounds") rounds = static_cast<unsigned>(std::atoi(next()));
        else if (a == "--seconds") seconds = std::atof(next());
        else if (a == "--warmup") warmup = std::atof(next());
        else if (a == "--pps") pps = static_cast<unsigned>(std::atoi(next()));
        else if (a == "--window") window = static_cast<unsigned>(std::atoi(next()));
        else if (a == "--caller-port") caller_port = static_cast<uint16_t>(std::atoi(next()));
        else if (a == "--callee-port") callee_port = static_cast<uint16_t>(std::atoi(next()));
        else {
            std::fprintf(stderr, "usage: rtpengine_drive --ng PORT --pid PID [--flows N] [--rounds N] [--seconds S] "
                                 "[--warmup S] [--pps N] [--window N] [--caller-port P] [--callee-port P]\n");
            return 2;
        }
    }
    if (ng_port == 0 || pid <= 0 || flows == 0 || rounds == 0 || seconds <= 0 || pps == 0 || window < 2 * batch) {
        std::fprintf(stderr, "rtpengine_drive: --ng and --pid are required; counts must be positive\n");
        return 2;
    }

    // Setup: offer from the caller, answer from the callee. The offer's reply carries the port
    // rtpengine opened towards the callee, the answer's reply the one towards the caller.
    const int ctl = udp_socket(0);
    if (ctl < 0) {
        std::perror("rtpengine_drive: control socket");
        return 1;
    }
    std::vector<uint16_t> to_port(flows);
    const auto setup_start = clock_type::now();
    for (unsigned c = 0; c < flows; ++c) {
        const std::string call_id = "rtpbench-" + std::to_string(c);
        const std::string offer = ng_command(ctl, ng_port, "o" + std::to_string(c),
            {{"command", "offer"}, {"call-id", call_id}, {"from-tag", "a" + std::to_string(c)},
             {"sdp", sdp(c, caller_port)}});
        const std::string answer = ng_command(ctl, ng_port, "a" + std::to_string(c),
            {{"command", "answer"}, {"call-id", call_id}, {"from-tag", "a" + std::to_string(c)},
             {"to-tag", "b" + std::to_string(c)}, {"sdp", sdp(c, callee_port)}});
        if (sdp_media_port(offer) == 0 || (to_port[c] = sdp_media_port(answer)) == 0) {
            std::fprintf(stderr, "rtpengine_drive: call %u not set up\n  offer reply: %.300s\n  answer reply: %.300s\n",
                         c, offer.c_str(), answer.c_str());
            return 1;
        }
    }
    std::printf("setup: calls=%u ms=%.0f\n", flows,
                std::chrono::duration<double, std::milli>(clock_type::now() - setup_start).count());

    const int tx = udp_socket(caller_port);
    const int rx = udp_socket(callee_port);
    if (tx < 0 || rx < 0) {
        std::perror("rtpengine_drive: media sockets");
        return 1;
    }
    timeval tv{0, 100000};
    setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

    std::atomic<uint64_t> received{0};
    std::atomic<bool> done{false};
    std::thread receiver([&] {
        std::vector<char> bufs(batch * 256);
        mmsghdr msgs[batch];
        iovec iov[batch];
        for (unsigned i = 0; i < batch; ++i) {
            iov[i] = {bufs.data() + i * 256, 256};
            msgs[i] = {};
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        while (!done.load(std::memory_order_relaxed)) {
            const int n = recvmmsg(rx, msgs, batch, 0, nullptr);
            // Relaxed: the main thread reads a count at the window's edges; nothing else hangs on it.
            if (n > 0) received.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        }
    });

    // Sender state: per flow an RTP header (SSRC per call, sequence and timestamp advance).
    struct rtp_flow {
        sockaddr_in to;
        uint16_t seq;
        uint32_t ts;
    };
    std::vector<rtp_flow> f(flows);
    for (unsigned c = 0; c < flows; ++c) {
        f[c].to = {};
        f[c].to.sin_family = AF_INET;
        f[c].to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        f[c].to.sin_port = htons(to_port[c]);
        f[c].seq = static_cast<uint16_t>(c * 7);
        f[c].ts = c * 1000;
    }
    std::vector<uint8_t> pkt(batch * rtp_payload, 0xff);  // 0xff: PCMU silence
    mmsghdr msgs[batch];
    iovec iov[batch];
    uint64_t sent = 0;
    unsigned next_flow = 0;
    // Closed loop: at most `window` packets sent and not yet received. rtpengine 10.5 stops
    // relaying altogether once its sockets overflow ("Too many packets in UDP receive queue",
    // then no CPU used and nothing forwarded, seen here at 200 kpps offered), so an open-loop
    // flood would measure that stall, not its capacity; a window keeps every port's queue at a
    // few packets while keeping rtpengine busy whenever it has CPU. Packets lost for good are
    // written off after 250 ms without progress (longer than rtpengine waits for its CPU on a
    // loaded machine) so that the window cannot shrink for ever.
    uint64_t written_off = 0;
    auto send_until = [&](clock_type::time_point end, uint64_t& sent_count) {
        const auto start = clock_type::now();
        uint64_t budget_sent = 0;
        uint64_t last_rx = received.load(std::memory_order_relaxed);
        auto last_progress = start;
        while (true) {
            const auto now = clock_type::now();
            if (now >= end) break;
            const uint64_t rx_now = received.load(std::memory_order_relaxed);
            if (rx_now != last_rx) {
                last_rx = rx_now;
                last_progress = now;
            }
            const int64_t in_flight = static_cast<int64_t>(sent) - static_cast<int64_t>(rx_now) -
                                      static_cast<int64_t>(written_off);
            if (in_flight + batch > static_cast<int64_t>(window)) {
                if (now - last_progress > std::chrono::milliseconds(250)) {
                    written_off = sent - rx_now;
                    last_progress = now;
                }
                std::this_thread::yield();
                continue;
            }
            // Paced: never ahead of pps since `start`.
            const double allowed = std::chrono::duration<double>(now - start).count() * pps;
            if (static_cast<double>(budget_sent) >= allowed) {
                std::this_thread::yield();
                continue;
            }
            for (unsigned i = 0; i < batch; ++i) {
                rtp_flow& r = f[next_flow];
                uint8_t* p = pkt.data() + i * rtp_payload;
                p[0] = 0x80;
                p[1] = 0;  // PT 0 (PCMU), no marker
                p[2] = static_cast<uint8_t>(r.seq >> 8);
                p[3] = static_cast<uint8_t>(r.seq);
                const uint32_t ssrc = 0x51000000u + next_flow;
                for (int b = 0; b < 4; ++b) {
                    p[4 + b] = static_cast<uint8_t>(r.ts >> (24 - 8 * b));
                    p[8 + b] = static_cast<uint8_t>(ssrc >> (24 - 8 * b));
                }
                ++r.seq;
                r.ts += 160;
                iov[i] = {p, rtp_payload};
                msgs[i] = {};
                msgs[i].msg_hdr.msg_name = &r.to;
                msgs[i].msg_hdr.msg_namelen = sizeof r.to;
                msgs[i].msg_hdr.msg_iov = &iov[i];
                msgs[i].msg_hdr.msg_iovlen = 1;
                next_flow = next_flow + 1 == flows ? 0 : next_flow + 1;
            }
            const int n = sendmmsg(tx, msgs, batch, 0);
            if (n > 0) {
                budget_sent += static_cast<uint64_t>(n);
                sent_count += static_cast<uint64_t>(n);
                sent += static_cast<uint64_t>(n);
            }
        }
    };

    uint64_t warm_sent = 0;
    send_until(clock_type::now() + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(warmup)),
               warm_sent);
    std::vector<double> rates;
    for (unsigned r = 0; r < rounds; ++r) {
        uint64_t round_sent = 0;
        const uint64_t rx0 = received.load(std::memory_order_relaxed);
        const double cpu0 = process_cpu_s(pid);
        const auto t0 = clock_type::now();
        send_until(t0 + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(seconds)),
                   round_sent);
        const uint64_t rx1 = received.load(std::memory_order_relaxed);
        const double cpu1 = process_cpu_s(pid);
        const double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
        const double got = static_cast<double>(rx1 - rx0);
        const double cpu = cpu1 - cpu0;
        // A round in which rtpengine hardly ran (another process held its CPU) says nothing.
        const double per_cpu = cpu > 0.05 ? got / cpu / 1e6 : 0;
        if (cpu > 0.05) rates.push_back(per_cpu);
        std::printf("round %u: received=%lu secs=%.2f rtpengine_cpu_s=%.2f mpps_wall=%.4f mpps_per_cpu=%.4f sent=%lu\n",
                    r + 1, static_cast<unsigned long>(rx1 - rx0), secs, cpu, got / secs / 1e6, per_cpu,
                    static_cast<unsigned long>(round_sent));
        std::fflush(stdout);
    }
    done = true;
    receiver.join();
    std::printf("lost: sent=%lu received=%lu (never relayed: rtpengine's drops)\n", static_cast<unsigned long>(sent),
                static_cast<unsigned long>(received.load()));
    std::printf("rtpengine_mpps=%.4f\n", median(rates));
    return 0;
}
