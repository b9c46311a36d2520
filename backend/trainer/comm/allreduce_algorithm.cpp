// See allreduce_algorithm.h.
#include "backend/trainer/comm/allreduce_algorithm.h"

#include <mpi.h>

#include <cstdlib>
#include <vector>

namespace trellis::trainer {
namespace {

// Open MPI 4.1's values (ompi_info --param coll tuned|libnbc --level 9).
constexpr const char *kTunedNames[] = {"ignore", "basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                                       "segmented_ring", "rabenseifner"};
constexpr const char *kLibnbcNames[] = {"ignore", "ring", "binomial", "rabenseifner", "recursive_doubling"};

// The value of control variable `name` as MPI holds it now, or -1 where it has no such variable.
int readControlVariable(const char *name)
{
    int count = 0;
    if (MPI_T_cvar_get_num(&count) != MPI_SUCCESS)
        return -1;
    for (int i = 0; i < count; ++i) {
        char varName[256];
        int nameLen = sizeof varName, verbosity = 0, binding = 0, scope = 0;
        MPI_Datatype type;
        MPI_T_enum enumType;
        if (MPI_T_cvar_get_info(i, varName, &nameLen, &verbosity, &type, &enumType, nullptr, nullptr, &binding, &scope) !=
            MPI_SUCCESS)
            continue;
        if (std::string(varName) != name)
            continue;
        if (type != MPI_INT)
            return -1;
        MPI_T_cvar_handle handle;
        int elements = 0, value = -1;
        if (MPI_T_cvar_handle_alloc(i, nullptr, &handle, &elements) != MPI_SUCCESS)
            return -1;
        if (MPI_T_cvar_read(handle, &value) != MPI_SUCCESS)
            value = -1;
        MPI_T_cvar_handle_free(&handle);
        return value;
    }
    return -1;
}

template <std::size_t N>
std::string named(int value, const char *const (&names)[N])
{
    return value >= 0 && static_cast<std::size_t>(value) < N ? names[value] : std::to_string(value);
}

} // namespace

void forceAllReduceAlgorithm(plan::AllReduceAlgorithm algorithm)
{
    const bool ring = algorithm == plan::AllReduceAlgorithm::Ring;
    if (!ring && algorithm != plan::AllReduceAlgorithm::RecursiveDoubling)
        return;
    // Numbers, not names: every Open MPI 4 reads them.
    ::setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 1);
    ::setenv("OMPI_MCA_coll_tuned_allreduce_algorithm", ring ? "4" : "3", 1);
    ::setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", ring ? "1" : "4", 1);
    if (ring)
        ::setenv("NCCL_ALGO", "Ring", 1);
}

std::string allReduceParametersInEffect()
{
    int provided = 0;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
        return {};
    std::string line;
    auto add = [&line](const std::string &part) { line += (line.empty() ? "" : " ") + part; };
    if (const int v = readControlVariable("coll_tuned_use_dynamic_rules"); v >= 0)
        add("coll_tuned_use_dynamic_rules=" + std::to_string(v));
    if (const int v = readControlVariable("coll_tuned_allreduce_algorithm"); v >= 0)
        add("coll_tuned_allreduce_algorithm=" + named(v, kTunedNames));
    if (const int v = readControlVariable("coll_libnbc_iallreduce_algorithm"); v >= 0)
        add("coll_libnbc_iallreduce_algorithm=" + named(v, kLibnbcNames));
    MPI_T_finalize();
    return line;
}

bool parseAllReduceAlgorithm(const std::string &name, plan::AllReduceAlgorithm &out)
{
    for (plan::AllReduceAlgorithm a : {plan::AllReduceAlgorithm::Auto, plan::AllReduceAlgorithm::Ring,
                                       plan::AllReduceAlgorithm::RecursiveDoubling, plan::AllReduceAlgorithm::Hierarchical})
        if (name == plan::toString(a)) {
            out = a;
            return true;
        }
    return false;
}

} // namespace trellis::trainer
