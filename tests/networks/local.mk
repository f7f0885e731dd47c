# tests/networks: partition, executor and memory plan, layout choice.
check_PROGRAMS += tests/networks/test_partition tests/networks/test_executor \
	tests/networks/test_layout
TESTS += tests/networks/test_partition tests/networks/test_executor \
	tests/networks/test_layout
tests_networks_test_partition_CPPFLAGS = $(TEST_CPPFLAGS)
tests_networks_test_partition_LDADD = examples/libnetworks.la $(TEST_LIBS)
tests_networks_test_executor_CPPFLAGS = $(TEST_CPPFLAGS)
tests_networks_test_executor_LDADD = examples/libnetworks.la $(TEST_LIBS) -ldl
tests_networks_test_layout_CPPFLAGS = $(TEST_CPPFLAGS)
tests_networks_test_layout_LDADD = $(TEST_LIBS)
check_PROGRAMS += tests/networks/test_taskscheduler
TESTS += tests/networks/test_taskscheduler
tests_networks_test_taskscheduler_CPPFLAGS = $(TEST_CPPFLAGS)
tests_networks_test_taskscheduler_LDADD = $(TEST_LIBS)
TESTS += tests/networks/test_cli.sh
EXTRA_DIST += tests/networks/test_cli.sh
check_PROGRAMS += tests/networks/test_net_cli
TESTS += tests/networks/test_net_cli
tests_networks_test_net_cli_CPPFLAGS = $(TEST_CPPFLAGS)
tests_networks_test_net_cli_LDADD = $(TEST_LIBS) -ldl
