// A hostile "kernel" artifact, hand-written against the launch ABI (targets/cpu/runtime/ascrun/launch/launch.h):
// its one int32 argument picks an attack, and it reports what happened in the error text.
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <dirent.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <sys/wait.h>
#include <unistd.h>

#ifndef MARKER
#define MARKER "/nonexistent"
#endif
#ifndef SECRET
#define SECRET "no secret given"
#endif

struct AscrunReport {
    void* log; uint64_t log_bytes; void* warnings; uint64_t warnings_bytes;
    void* model; uint64_t model_bytes; void* trace; uint64_t trace_bytes;
};

// "nice N" of /proc/self/autogroup ("/autogroup-ID nice N"): the scheduling group of its session
static std::string own_autogroup_nice() {
    char text[128] = {0};
    int fd = open("/proc/self/autogroup", O_RDONLY);
    if (fd < 0) return std::string("no autogroup: ") + strerror(errno);
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    const char* nice = n > 0 ? strstr(text, "nice ") : nullptr;
    return nice ? std::string(nice, strcspn(nice, "\n")) : "an unreadable autogroup";
}

static std::string outcome(const char* what, int rc) {
    return std::string(what) + (rc < 0 ? std::string(": refused: ") + strerror(errno) : ": allowed");
}

static int read_file(const char* path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return -1;
    char c;
    int rc = read(fd, &c, 1);
    close(fd);
    return rc < 0 ? -1 : 0;
}

static int use_inherited_fds() {  // any fd past stdio answering a write or a read
    for (int fd = 3; fd < 64; ++fd) {
        if (fcntl(fd, F_GETFD) >= 0 && write(fd, "PING\r\n", 6) > 0) return 0;
    }
    errno = EBADF;
    return -1;
}

static int fork_bomb() {
    for (int i = 0; i < 64; ++i) {
        pid_t pid = fork();
        if (pid < 0) return -1;
        if (pid == 0) { int fd = open(MARKER, O_CREAT | O_WRONLY, 0644); (void)fd; _exit(0); }
    }
    return 0;
}

// Every environment and command line this process can see (/proc/*/environ, /proc/*/cmdline):
// where SECRET appears, or "nowhere".
static std::string find_secret() {
    std::string found;
    DIR* proc = opendir("/proc");
    if (proc == nullptr) return "no /proc";
    for (dirent* entry; (entry = readdir(proc)) != nullptr;) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        for (const char* file : {"environ", "cmdline"}) {
            std::string path = std::string("/proc/") + entry->d_name + "/" + file, text;
            int fd = open(path.c_str(), O_RDONLY);
            if (fd < 0) continue;
            char buffer[4096];
            for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, got);
            close(fd);
            if (text.find(SECRET) != std::string::npos) found += (found.empty() ? "" : " ") + path;
        }
    }
    closedir(proc);
    return found.empty() ? "nowhere" : found;
}

extern "C" {
const char* ascrun_signature(void) { return "int32"; }
uint32_t ascrun_abi_version(void) { return 3; }
void ascrun_free_report(AscrunReport*) {}
int ascrun_launch(uint32_t, void** args, void*, uint32_t, uint32_t, uint32_t, uint32_t, AscrunReport* report, char* err,
                  uint32_t cap) {
    memset(report, 0, sizeof *report);
    int mode = *static_cast<int32_t*>(args[0]);
    std::string said;
    switch (mode) {
        case 0: said = "ok"; break;
        case 1: *static_cast<volatile int*>(nullptr) = 1; break;  // a crash
        case 2: said = outcome("read /etc/passwd", read_file("/etc/passwd")); break;
        case 3: said = outcome("read " MARKER, read_file(MARKER)); break;
        case 4: said = outcome("write " MARKER, open(MARKER, O_CREAT | O_WRONLY, 0644)); break;
        case 5: said = outcome("kill parent", kill(getppid(), SIGKILL)); break;
        case 6: said = outcome("kill everyone", kill(-1, SIGKILL)); break;
        case 7: said = outcome("fork", fork_bomb()); break;
        case 8: said = outcome("inherited fds", use_inherited_fds()); break;
        case 9: said = outcome("socket", socket(AF_INET, SOCK_STREAM, 0)); break;
        case 10: said = outcome("read /proc/self/environ", read_file("/proc/self/environ")); break;
        case 11: for (;;) {} break;  // spins past any timeout
        case 12: said = "secret found " + find_secret(); break;
        case 13: std::thread([] { for (;;) {} }).detach(); said = "a thread left spinning"; break;
        case 14: said = outcome("new session", setsid()); break;  // its scheduling group would be at nice 0
        case 15: said = "scheduled at " + own_autogroup_nice(); break;
        case 16: said = outcome("open /dev/tty", open("/dev/tty", O_RDWR)); break;  // a terminal to type into
    }
    snprintf(err, cap, "%s", said.c_str());
    return 1;
}
}
