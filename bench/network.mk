# bench/: whole networks end to end against PyTorch
# (bench/bench_network.py drives bench/bench_network).
noinst_PROGRAMS += bench/bench_network
bench_bench_network_SOURCES = bench/bench_network.c
bench_bench_network_LDADD = examples/libnetworks.la libtessel.la $(GC_LIBS) -lm
EXTRA_DIST += bench/bench_network.py
