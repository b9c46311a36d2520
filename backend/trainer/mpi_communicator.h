// Communicator over an MPI communicator on host buffers.
#pragma once

#include "trainer/communicator.h"

#include <mpi.h>

#include <map>

namespace trellis::trainer {

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator(MPI_Comm comm, std::string name);
    ~MpiCommunicator() override;

    int rank() const override { return m_rank; }
    int size() const override { return m_size; }
    std::string name() const override { return m_name; }

    void allReduce(float *data, std::size_t count, ReduceOp op) override;
    void allReduce(double *data, std::size_t count, ReduceOp op) override;
    void broadcast(void *data, std::size_t bytes, int root) override;
    void barrier() override;

    std::vector<CollectiveRecord> takeRecords() override;
    double totalMs() const override { return m_totalMs; }

private:
    template <typename T>
    void allReduceImpl(T *data, std::size_t count, ReduceOp op, MPI_Datatype type);
    void record(const char *op, std::uint64_t bytes, double ms);

    MPI_Comm m_comm;
    std::string m_name;
    int m_rank = 0;
    int m_size = 1;
    double m_totalMs = 0;
    std::map<std::string, CollectiveRecord> m_records;
};

// Aborts the whole job with a message naming host, rank, file and line (nccl-tests style).
[[noreturn]] void mpiFail(int code, const char *call, const char *file, int line);

#define TRELLIS_MPI_CHECK(call)                                                                    \
    do {                                                                                           \
        int trellisMpiError = (call);                                                              \
        if (trellisMpiError != MPI_SUCCESS)                                                        \
            ::trellis::trainer::mpiFail(trellisMpiError, #call, __FILE__, __LINE__);               \
    } while (0)

} // namespace trellis::trainer
