// File: bench/micro/micro_main.cpp
// Entry point of servebench_micro: the Google Benchmark micro-benchmarks of hot paths. Each
// <part>_bench.cpp registers its benchmarks; CMake builds a file only when its part exists.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
