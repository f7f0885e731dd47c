/* Tessel: the whole public API. */
#ifndef TESSEL_H
#define TESSEL_H

#include <tessel/version.h>
#include <tessel/dsl.h>
#include <tessel/analysis.h>
#include <tessel/loop.h>
#include <tessel/backend.h>
#include <tessel/schedule.h>
#include <tessel/lower.h>
#include <tessel/target.h>
#include <tessel/cuda.h>
#include <tessel/gpu.h>
#include <tessel/space.h>
#include <tessel/metatemplate.h>
#include <tessel/search.h>
#include <tessel/measure.h>
#include <tessel/records.h>
#include <tessel/network.h>
#include <tessel/tune.h>
#include <tessel/onnx.h>

#endif
