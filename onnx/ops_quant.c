/* Operators of this group are added here; the table is empty for now. */
#include <config.h>

#include "onnx/internal.h"

const struct ox_op ox_ops_quant[] = {
	{ NULL, NULL },
};
