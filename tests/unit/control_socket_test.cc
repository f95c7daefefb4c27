// Unit tests of the control socket: requests and responses over a real Unix socket in a
// temporary directory, bad input, several clients, stale sockets and the client's errors.
#include "control/control_socket.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace sbc::control {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class control_socket_test : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = (fs::temp_directory_path() / "sbc_ctl_XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
        path_ = (dir_ / "run" / "sbcd.sock").string();  // "run" does not exist yet
    }
    void TearDown() override
    {
        stop_server();
        fs::remove_all(dir_);
    }

    // Serves on a thread of its own, as the control loop would, until stop_server().
    void start_server()
    {
        std::string error;
        auto s = control_socket::open(path_, error);
        ASSERT_TRUE(s) << error;
        server_ = std::thread([this, sock = std::move(*s)]() mutable {
            while (!stop_) sock.poll(10, [](const json& req) -> json {
                if (req.value("cmd", "") == "throw") throw std::runtime_error("handler failed");
                return {{"ok", true}, {"echo", req}};
            });
        });
    }
    void stop_server()
    {
        stop_ = true;
        if (server_.joinable()) server_.join();
    }

    int raw_connect()
    {
        int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
        EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        timeval tv{2, 0};
        ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        return fd;
    }
    static void send_all(int fd, const std::string& s) { ASSERT_EQ(::send(fd, s.data(), s.size(), MSG_NOSIGNAL), ssize_t(s.size())); }
    static std::string read_line(int fd)
    {
        std::string line;
        char c;
        while (::recv(fd, &c, 1, 0) == 1) {
            if (c == '\n') return line;
            line += c;
        }
        return "<closed: " + line + ">";
    }

    fs::path dir_;
    std::string path_;
    std::thread server_;
    std::atomic<bool> stop_{false};
};

TEST_F(control_socket_test, answers_a_request_with_the_handlers_response)
{
    start_server();
    std::string error;
    auto r = control_request(path_, {{"cmd", "stats"}}, error, 2000);
    ASSERT_TRUE(r) << error;
    EXPECT_EQ((*r)["ok"], true);
    EXPECT_EQ((*r)["echo"]["cmd"], "stats");
}

TEST_F(control_socket_test, creates_its_directory_and_a_socket_only_root_and_group_may_use)
{
    start_server();
    struct stat st {};
    ASSERT_EQ(::stat(path_.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0660u);
    ASSERT_EQ(::stat((dir_ / "run").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST_F(control_socket_test, answers_bad_json_with_an_error_and_keeps_the_connection)
{
    start_server();
    int fd = raw_connect();
    send_all(fd, "this is not json\n[1,2]\n{\"cmd\":\"throw\"}\n{\"cmd\":\"status\"}\n");
    auto bad = json::parse(read_line(fd));
    EXPECT_NE(bad.value("error", "").find("not valid JSON"), std::string::npos) << bad;
    auto not_object = json::parse(read_line(fd));
    EXPECT_NE(not_object.value("error", "").find("not a JSON object"), std::string::npos) << not_object;
    auto threw = json::parse(read_line(fd));
    EXPECT_EQ(threw.value("error", ""), "handler failed");
    auto good = json::parse(read_line(fd));
    EXPECT_EQ(good["echo"]["cmd"], "status");
    ::close(fd);
}

TEST_F(control_socket_test, serves_two_clients_at_once_in_any_order)
{
    start_server();
    int a = raw_connect();
    int b = raw_connect();
    send_all(a, "{\"cmd\":\"st");  // a sends half a request and waits
    send_all(b, "{\"cmd\":\"b\"}\n");
    EXPECT_EQ(json::parse(read_line(b))["echo"]["cmd"], "b") << "a slow client does not hold up another";
    send_all(a, "ats\"}\n");
    EXPECT_EQ(json::parse(read_line(a))["echo"]["cmd"], "stats");
    ::close(a);
    ::close(b);
}

TEST_F(control_socket_test, drops_a_client_that_sends_more_than_64_kib_without_a_newline)
{
    start_server();
    int fd = raw_connect();
    std::string junk(control_max_request + 1024, 'x');
    ::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
    char c;
    EXPECT_LE(::recv(fd, &c, 1, 0), 0) << "the server closed the connection";
    ::close(fd);
    std::string error;
    EXPECT_TRUE(control_request(path_, {{"cmd", "x"}}, error, 2000)) << "and still serves others: " << error;
}

TEST_F(control_socket_test, survives_a_client_that_disconnects_before_reading_its_answer)
{
    start_server();
    int fd = raw_connect();
    send_all(fd, "{\"cmd\":\"a\"}\n");
    ::close(fd);
    std::string error;
    EXPECT_TRUE(control_request(path_, {{"cmd", "x"}}, error, 2000)) << error;
}

TEST_F(control_socket_test, replaces_a_stale_socket_file_left_by_a_dead_daemon)
{
    fs::create_directories(dir_ / "run");
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::close(fd);  // the file stays, nobody listens
    start_server();
    std::string error;
    EXPECT_TRUE(control_request(path_, {{"cmd", "x"}}, error, 2000)) << error;
}

TEST_F(control_socket_test, refuses_to_take_over_a_socket_another_daemon_answers_on)
{
    start_server();
    std::string error;
    EXPECT_FALSE(control_socket::open(path_, error));
    EXPECT_NE(error.find("another sbcd answers on " + path_), std::string::npos) << error;
    EXPECT_TRUE(control_request(path_, {{"cmd", "x"}}, error, 2000)) << "the first one still works: " << error;
}

TEST_F(control_socket_test, refuses_a_path_that_is_a_regular_file)
{
    fs::create_directories(dir_ / "run");
    { std::ofstream(path_) << "data"; }
    std::string error;
    EXPECT_FALSE(control_socket::open(path_, error));
    EXPECT_NE(error.find("is not a socket"), std::string::npos) << error;
    EXPECT_TRUE(fs::exists(path_)) << "the file is left alone";
}

TEST_F(control_socket_test, removes_the_socket_file_when_closed)
{
    std::string error;
    {
        auto s = control_socket::open(path_, error);
        ASSERT_TRUE(s) << error;
        EXPECT_TRUE(fs::exists(path_));
    }
    EXPECT_FALSE(fs::exists(path_));
}

TEST_F(control_socket_test, client_says_sbcd_is_not_running_when_there_is_no_socket)
{
    std::string error;
    EXPECT_FALSE(control_request(path_, {{"cmd", "status"}}, error, 500));
    EXPECT_EQ(error, "is sbcd running? no socket at " + path_);
}

TEST_F(control_socket_test, client_gives_up_after_its_timeout_when_sbcd_does_not_answer)
{
    std::string error;
    auto s = control_socket::open(path_, error);  // bound but never polled
    ASSERT_TRUE(s) << error;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(control_request(path_, {{"cmd", "status"}}, error, 300));
    EXPECT_NE(error.find("timed out"), std::string::npos) << error;
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

}  // namespace
}  // namespace sbc::control
