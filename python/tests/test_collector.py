"""A job Trellis did not launch: its identity from its launcher's variables, as
backend/protocol/collector_join.cpp reads them, and the rank from torchrun's, Slurm's or Open MPI's."""

import unittest

from trellis_telemetry._collector import job_identity
from trellis_telemetry._run import RankInfo


class JobIdentityTest(unittest.TestCase):
    def test_each_launcher_names_the_job(self):
        cases = [
            ({"TRELLIS_JOB_NAME": "mine", "TRELLIS_JOB_ID": "7", "SLURM_JOB_ID": "12"}, ("mine", "7", "", 0)),
            ({"SLURM_JOB_NAME": "pretrain", "SLURM_JOB_ID": "12", "SLURM_RESTART_COUNT": "2"}, ("pretrain", "12", "slurm", 2)),
            ({"TORCHELASTIC_RUN_ID": "abc", "TORCHELASTIC_RESTART_COUNT": "1"}, ("script", "abc", "torchrun", 1)),
            ({"TORCHELASTIC_RUN_ID": "none", "MASTER_ADDR": "n1", "MASTER_PORT": "29500"}, ("script", "n1:29500", "torchrun", 0)),
            ({"PMIX_NAMESPACE": "prterun-x-1"}, ("script", "prterun-x-1", "mpirun", 0)),
            ({}, ("script", "", "", 0)),
        ]
        for environ, expected in cases:
            with self.subTest(environ=environ):
                self.assertEqual(job_identity(environ, "script"), expected)

    def test_a_bad_restart_count_is_no_attempt(self):
        self.assertEqual(job_identity({"SLURM_JOB_ID": "3", "SLURM_RESTART_COUNT": "x"}, "s")[3], 0)

    def test_ranks_from_slurm_and_open_mpi_when_torchrun_set_none(self):
        slurm = RankInfo({"SLURM_PROCID": "3", "SLURM_NTASKS": "8", "SLURM_LOCALID": "1"})
        self.assertEqual((slurm.rank, slurm.world_size, slurm.local_rank), (3, 8, 1))
        ompi = RankInfo({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "4", "OMPI_COMM_WORLD_LOCAL_RANK": "0"})
        self.assertEqual((ompi.rank, ompi.world_size, ompi.local_rank), (2, 4, 0))
        torch = RankInfo({"RANK": "1", "WORLD_SIZE": "2", "SLURM_PROCID": "9"})
        self.assertEqual((torch.rank, torch.world_size), (1, 2))


if __name__ == "__main__":
    unittest.main()
