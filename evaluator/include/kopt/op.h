// kopt/op.h — the one header a kopt-bench candidate (or C++ reference) includes.
//
//   #include <kopt/op.h>
//   static at::Tensor forward(const at::Tensor& x, double alpha) { ... }
//   KOPT_LIBRARY(m) { m.def("forward(Tensor x, float alpha) -> Tensor"); }
//   KOPT_LIBRARY_IMPL(CPU, m) { m.impl("forward", &forward); }   // or CUDA, CompositeExplicitAutograd
//
// kopt-bench compiles every build with -DKOPT_NS=<unique namespace> (derived from the build's
// content hash), so two builds loaded in one process never register the same TORCH_LIBRARY
// namespace (which aborts inside dlopen). Never write TORCH_LIBRARY(<fixed name>, m) yourself.
#pragma once
#include <torch/library.h>

#ifndef KOPT_NS
#error "KOPT_NS is injected by kopt-bench (-DKOPT_NS=...); build candidates through kopt-bench"
#endif

#define KOPT_LIBRARY_NS_(ns, m) TORCH_LIBRARY(ns, m)
#define KOPT_LIBRARY_IMPL_NS_(ns, key, m) TORCH_LIBRARY_IMPL(ns, key, m)
#define KOPT_LIBRARY(m) KOPT_LIBRARY_NS_(KOPT_NS, m)
#define KOPT_LIBRARY_IMPL(key, m) KOPT_LIBRARY_IMPL_NS_(KOPT_NS, key, m)

#define KOPT_STR2_(x) #x
#define KOPT_STR_(x) KOPT_STR2_(x)
// The injected namespace as a string literal, e.g. for error messages.
#define KOPT_NS_STRING KOPT_STR_(KOPT_NS)
