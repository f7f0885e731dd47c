/* Operators outside the main families: losses, scatters, sorting, signal
 * windows, recurrent layers.  The table is filled as they are added. */
#include <config.h>

#include "onnx/internal.h"

const struct ox_op ox_ops_misc[] = {
	{ NULL, NULL },
};
