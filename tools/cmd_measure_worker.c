/* tessel measure-worker: the worker process of a measurer (hidden: the
 * library starts it, see include/tessel/measure.h). */
#include <config.h>

#include <string.h>

#include "tools/commands.h"

/* Run "tessel measure-worker DIR [--reference]" ("argc", "argv"). */
int ts_cmd_measure_worker(int argc, char **argv)
{
	if (argc < 2 || argc > 3 ||
	    (argc == 3 && strcmp(argv[2], "--reference"))) {
		fprintf(stderr, "usage: tessel measure-worker DIR "
			"[--reference] (started by the library)\n");
		return TS_EXIT_USAGE;
	}
	return ts_measure_worker_main(argv[1], argc == 3);
}
