// See curve_keys.h.
#include "backend/protocol/curve_keys.h"

#include <zmq.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace trellis::proto {
namespace {

bool isZ85Key(const std::string &key)
{
    static const char *alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    if (key.size() != 40)
        return false;
    for (char ch : key)
        if (ch == '\0' || !std::strchr(alphabet, ch))
            return false;
    return true;
}

} // namespace

bool curveAvailable()
{
    return zmq_has("curve") != 0;
}

std::optional<CurveKeys> generateCurveKeys(std::string &error)
{
    if (!curveAvailable()) {
        error = "this libzmq was built without CURVE security";
        return std::nullopt;
    }
    char pub[41], sec[41];
    CurveKeys keys;
    if (zmq_curve_keypair(pub, sec) != 0) {
        error = std::string("cannot make a CURVE keypair: ") + zmq_strerror(zmq_errno());
        return std::nullopt;
    }
    keys.serverPublic = pub;
    keys.serverSecret = sec;
    if (zmq_curve_keypair(pub, sec) != 0) {
        error = std::string("cannot make a CURVE keypair: ") + zmq_strerror(zmq_errno());
        return std::nullopt;
    }
    keys.clientPublic = pub;
    keys.clientSecret = sec;
    return keys;
}

std::string writeCurveKeys(const std::string &path, const CurveKeys &keys)
{
    std::string text;
    for (auto [name, value] : {std::pair{"server_public", &keys.serverPublic}, std::pair{"server_secret", &keys.serverSecret},
                               std::pair{"client_public", &keys.clientPublic}, std::pair{"client_secret", &keys.clientSecret}})
        if (!value->empty())
            text += std::string(name) + "=" + *value + "\n";
    const std::string temp = path + ".tmp";
    ::unlink(temp.c_str());
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return "cannot create " + temp + ": " + std::strerror(errno);
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const bool closed = ::close(fd) == 0;
    if (!written || !closed || ::rename(temp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        ::unlink(temp.c_str());
        return "cannot write " + path + ": " + why;
    }
    return {};
}

std::optional<CurveKeys> readCurveKeys(const std::string &path, std::string &error)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        error = "telemetry keys " + path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if ((st.st_mode & 077) != 0) {
        error = "telemetry keys " + path + ": readable by others (mode " + std::to_string(st.st_mode & 0777) +
                "); it must be 0600";
        return std::nullopt;
    }
    std::FILE *f = std::fopen(path.c_str(), "r");
    if (!f) {
        error = "telemetry keys " + path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    CurveKeys keys;
    char buffer[256];
    int line = 0;
    bool ok = true;
    while (ok && std::fgets(buffer, sizeof buffer, f)) {
        ++line;
        std::string text(buffer);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
            text.pop_back();
        if (text.empty())
            continue;
        const auto eq = text.find('=');
        const std::string name = text.substr(0, eq), value = eq == std::string::npos ? "" : text.substr(eq + 1);
        std::string *slot = name == "server_public"   ? &keys.serverPublic
                            : name == "server_secret" ? &keys.serverSecret
                            : name == "client_public" ? &keys.clientPublic
                            : name == "client_secret" ? &keys.clientSecret
                                                      : nullptr;
        if (!slot || eq == std::string::npos) {
            error = "telemetry keys " + path + ":" + std::to_string(line) + ": expected server_public=, server_secret=, client_public= or client_secret=";
            ok = false;
        } else if (!isZ85Key(value)) {
            error = "telemetry keys " + path + ":" + std::to_string(line) + ": " + name + " is not a 40-character Z85 key";
            ok = false;
        } else {
            *slot = value;
        }
    }
    std::fclose(f);
    if (!ok)
        return std::nullopt;
    return keys;
}

} // namespace trellis::proto
