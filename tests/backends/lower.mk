# tests/backends: schedules, lowering, and random schedules run against
# the reference interpreter.
check_PROGRAMS += tests/backends/test_schedule tests/backends/test_lower \
	tests/backends/test_random_schedules
TESTS += tests/backends/test_schedule tests/backends/test_lower \
	tests/backends/test_random_schedules
tests_backends_test_schedule_SOURCES = tests/backends/test_schedule.c \
	tests/backends/small_program.c tests/backends/small_program.h
tests_backends_test_schedule_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_schedule_LDADD = $(TEST_LIBS)
tests_backends_test_lower_SOURCES = tests/backends/test_lower.c \
	tests/backends/small_program.c tests/backends/small_program.h
tests_backends_test_lower_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_lower_LDADD = $(TEST_LIBS)
tests_backends_test_random_schedules_SOURCES = \
	tests/backends/test_random_schedules.c \
	tests/backends/random_schedule.c tests/backends/random_schedule.h \
	tests/backends/fence.c tests/backends/fence.h
tests_backends_test_random_schedules_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_random_schedules_LDADD = examples/libcatalogue.la \
	$(TEST_LIBS)
check_PROGRAMS += tests/backends/test_split_select
TESTS += tests/backends/test_split_select
tests_backends_test_split_select_SOURCES = \
	tests/backends/test_split_select.c \
	tests/backends/random_schedule.c tests/backends/random_schedule.h \
	tests/backends/fence.c tests/backends/fence.h
tests_backends_test_split_select_CPPFLAGS = $(TEST_CPPFLAGS)
tests_backends_test_split_select_LDADD = $(TEST_LIBS)
