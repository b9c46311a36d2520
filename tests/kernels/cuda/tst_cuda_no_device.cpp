// A CUDA build run where there is no GPU (CI, a laptop, a node whose driver is gone; on a GPU
// machine CUDA_VISIBLE_DEVICES hides them): every op family, the device's memory and streams, and
// the CUDA trainer on a CUDA plan fail with a clear device error, each within 10 s — never a hang
// (a lock taken twice on the way to the error was one), never std::bad_alloc for what is no lack
// of memory. Plain executable (the lent GPU machine has no Qt); exits 1 on any failure.
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <string>
#include <thread>

using namespace trellis::kernels;

namespace {

int g_failures = 0;

bool namesTheDevice(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text.find("cuda") != std::string::npos || text.find("device") != std::string::npos ||
           text.find("driver") != std::string::npos || text.find("cudnn") != std::string::npos;
}

// Runs `op` on a thread of its own: it must throw an error naming the device within 10 s.
void expectDeviceError(const char *family, const std::function<void()> &op)
{
    auto result = std::async(std::launch::async, [op]() -> std::string {
        try {
            op();
        } catch (const std::bad_alloc &) {
            return "std::bad_alloc (an out-of-memory error where there is no device)";
        } catch (const std::exception &e) {
            return std::string("error:") + e.what();
        }
        return "returned without an error";
    });
    if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
        std::printf("FAIL %s: no answer within 10 s (a hang)\n", family);
        std::fflush(stdout);
        std::_Exit(1); // the hung thread cannot be joined
    }
    const std::string what = result.get();
    if (what.rfind("error:", 0) == 0 && namesTheDevice(what)) {
        std::printf("ok   %-22s %s\n", family, what.substr(6, 140).c_str());
        return;
    }
    ++g_failures;
    std::printf("FAIL %s: %s\n", family, what.c_str());
}

// The CUDA trainer on the quick start's CUDA plan, one rank: the documented device error's exit
// code, within 10 s of its start (mpirun's own start not counted: the trainer is run directly,
// as mpirun would with one rank).
void trainerFailsCleanly(const std::string &trainer, const std::string &plan)
{
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    if (pid == 0) {
        const int devnull = ::open("/dev/null", 1);
        if (devnull >= 0)
            dup2(devnull, 1);
        execl(trainer.c_str(), trainer.c_str(), "--plan", plan.c_str(), "--quiet", static_cast<char *>(nullptr));
        std::_Exit(127);
    }
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            std::printf("FAIL trellis-trainer-cuda: still running after 10 s (a hang)\n");
            ++g_failures;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    constexpr int kExitDeviceError = 13; // backend/protocol/exit_codes.h
    if (code == kExitDeviceError) {
        std::printf("ok   %-22s exit code %d (device error)\n", "trellis-trainer-cuda", code);
        return;
    }
    ++g_failures;
    std::printf("FAIL trellis-trainer-cuda: exit code %d, expected %d (device error)\n", code, kExitDeviceError);
}

} // namespace

int main(int argc, char **argv)
{
    setenv("CUDA_VISIBLE_DEVICES", "", 1); // before the first CUDA call: no device, even on a GPU machine
    const Stream s{Device::Cuda, 0, nullptr};
    // Addresses no device has (nothing may touch them: there is no device), never null, so that no
    // op takes a null pointer for "nothing to do" and returns without reaching the device.
    float *f = reinterpret_cast<float *>(std::uintptr_t{1} << 40);
    float *g = f + (1 << 20);
    bf16 *h = reinterpret_cast<bf16 *>(std::uintptr_t{3} << 40);
    const std::int32_t *tokens = reinterpret_cast<const std::int32_t *>(std::uintptr_t{5} << 40);
    expectDeviceError("device count", [] {
        if (cuda::deviceCount() == 0)
            throw std::runtime_error("no CUDA device (deviceCount() is 0)");
    });
    expectDeviceError("deviceAllocate", [] { cuda::deviceAllocate(0, 1 << 20); });
    expectDeviceError("createStream", [] { cuda::createStream(0); });
    expectDeviceError("synchronize", [s] { cuda::synchronize(s); });
    expectDeviceError("linear (cuBLASLt)", [&] { trellis::kernels::linearForward<float>(s, f, f, f, f, 4, 8, 8); });
    expectDeviceError("linear bf16", [&] { trellis::kernels::linearForward<bf16>(s, h, h, h, h, 4, 8, 8); });
    expectDeviceError("linearBackward", [&] { trellis::kernels::linearBackward<float>(s, f, f, f, f, f, f, 4, 8, 8); });
    expectDeviceError("layerNorm", [&] { trellis::kernels::layerNormForward<float>(s, f, f, f, f, f, f, 4, 8); });
    expectDeviceError("layerNormBackward", [&] { trellis::kernels::layerNormBackward<float>(s, f, f, f, f, f, f, f, f, 4, 8); });
    expectDeviceError("rmsNorm", [&] { trellis::kernels::rmsNormForward<float>(s, f, f, f, f, 4, 8); });
    expectDeviceError("gelu", [&] { trellis::kernels::geluForward<float>(s, f, f, 32); });
    expectDeviceError("swiglu", [&] { trellis::kernels::swigluForward<float>(s, f, f, 4, 8); });
    expectDeviceError("residual", [&] { trellis::kernels::residualForward<float>(s, f, f, f, 32); });
    expectDeviceError("crossEntropy", [&] { trellis::kernels::crossEntropyForward<float>(s, f, f, f, tokens, 4, 8); });
    expectDeviceError("encoder", [&] { trellis::kernels::encoderForward<float>(s, f, tokens, f, f, 1, 4, 8, 16); });
    expectDeviceError("attention", [&] { trellis::kernels::attentionForward<float>(s, f, f, f, 1, 4, 8, 2, 2); });
    expectDeviceError("flash attention (cuDNN)", [&] { cuda::flashAttentionForward(s, h, f, h, 1, 4, 16, 2, 2); });
    expectDeviceError("fill", [&] { trellis::kernels::fill<float>(s, f, 32, 1.0f); });
    expectDeviceError("copy", [&] { trellis::kernels::copy<float>(s, g, f, 32); });
    expectDeviceError("sumSquares", [&] { cuda::sumSquares(s, f, 32); });
    expectDeviceError("adamw", [&] { cuda::adamw(s, f, f, f, f, nullptr, 32, cpu::AdamWStep{}); });
    expectDeviceError("toHost", [&] {
        float host[4];
        cuda::toHost(s, host, f, sizeof host);
    });
    if (argc >= 3)
        trainerFailsCleanly(argv[1], argv[2]);
    else
        std::printf("(no trainer given: trellis-trainer-cuda not checked)\n");
    std::printf("%s\n", g_failures == 0 ? "every op family failed cleanly" : "some failed badly");
    return g_failures == 0 ? 0 : 1;
}
