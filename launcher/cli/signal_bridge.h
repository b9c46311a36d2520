// trellis-cli's commands that hold an event loop (run, attach, collect) end it gracefully on
// SIGTERM, SIGINT and SIGHUP through this bridge. Internal to the launcher.
#pragma once

#include <QObject>
#include <QSocketNotifier>

#include <csignal>
#include <fcntl.h>
#include <functional>
#include <memory>
#include <unistd.h>

namespace trellis::launcher::cli {

// Stops the event loop's owner gracefully on SIGTERM, SIGINT and SIGHUP: the handler only writes
// a byte to a pipe; the loop reads it and calls `onSignal` on the main thread.
class SignalBridge {
public:
    explicit SignalBridge(std::function<void(int)> onSignal) : m_onSignal(std::move(onSignal))
    {
        if (::pipe2(s_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
            return;
        m_notifier = std::make_unique<QSocketNotifier>(s_pipe[0], QSocketNotifier::Read);
        QObject::connect(m_notifier.get(), &QSocketNotifier::activated, m_notifier.get(), [this] {
            unsigned char signo = 0;
            while (::read(s_pipe[0], &signo, 1) == 1)
                m_onSignal(signo);
        });
        struct sigaction sa {};
        sa.sa_handler = [](int signo) {
            const unsigned char b = static_cast<unsigned char>(signo);
            [[maybe_unused]] const auto n = ::write(s_pipe[1], &b, 1);
        };
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        for (int signo : {SIGTERM, SIGINT, SIGHUP})
            ::sigaction(signo, &sa, nullptr);
    }
    ~SignalBridge()
    {
        for (int signo : {SIGTERM, SIGINT, SIGHUP})
            ::signal(signo, SIG_DFL);
    }

private:
    static inline int s_pipe[2] = {-1, -1};
    std::function<void(int)> m_onSignal;
    std::unique_ptr<QSocketNotifier> m_notifier;
};

} // namespace trellis::launcher::cli
