// Per-run ZeroMQ CURVE keys for telemetry that crosses hosts: the supervisor's receiver is the CURVE
// server and accepts only the run's client key (its ZAP handler refuses every other key); each rank
// connects with the client keypair. Keys live in files of mode 0600, never on a command line:
//   server_public=<40 Z85 chars>
//   server_secret=...            (the supervisor's file only)
//   client_public=...
//   client_secret=...            (the ranks' file; the supervisor's holds it too, to stage it)
// No Qt: the trainer links this.
#pragma once

#include <optional>
#include <string>

namespace trellis::proto {

struct CurveKeys {
    std::string serverPublic, serverSecret, clientPublic, clientSecret; // Z85, 40 characters each

    bool hasServer() const { return serverSecret.size() == 40 && serverPublic.size() == 40; }
    bool hasClient() const { return clientSecret.size() == 40 && clientPublic.size() == 40 && serverPublic.size() == 40; }
    CurveKeys forRanks() const { return {serverPublic, {}, clientPublic, clientSecret}; }
};

bool curveAvailable(); // libzmq built with CURVE
// Two fresh keypairs; nullopt (with `error`) when libzmq cannot make them.
std::optional<CurveKeys> generateCurveKeys(std::string &error);
// Writes the keys present (non-empty) to `path`, created with mode 0600 (an existing file is
// replaced only through a fresh 0600 file). Returns "" or why not.
std::string writeCurveKeys(const std::string &path, const CurveKeys &keys);
// Reads a key file; refuses one that others can read, a malformed line, or a key that is not 40 Z85
// characters, naming the file and the line.
std::optional<CurveKeys> readCurveKeys(const std::string &path, std::string &error);

} // namespace trellis::proto
