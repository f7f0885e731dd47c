# tests/mpi: tessel tune on the ranks of an MPI job (SKIP without MPI).
TESTS += tests/mpi/test_mpi_tune.sh
EXTRA_DIST += tests/mpi/test_mpi_tune.sh
