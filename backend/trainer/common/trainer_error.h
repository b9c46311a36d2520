// An error the trainer reports and exits with: the message for the user and the documented exit
// code (protocol/exit_codes.h). Thrown where a run cannot go on; Trainer::run catches it (and
// every other exception) at its top level, publishes a failure Event and exits with the code.
#pragma once

#include <stdexcept>
#include <string>

namespace trellis::trainer {

class TrainerError : public std::runtime_error {
public:
    TrainerError(int exitCode, const std::string &message) : std::runtime_error(message), m_code(exitCode) {}
    int exitCode() const { return m_code; }

private:
    int m_code;
};

} // namespace trellis::trainer
