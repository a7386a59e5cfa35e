/* Copyright (c) Aspen contributors. IPU toolchain-compatible codelet header.
 * printf() from a codelet writes to the engine's print stream (stdout unless
 * Engine::setPrintStream chose another). Each vertex library formats into a
 * buffer and passes it to the sink the runtime installed with
 * aspen_codelet_set_print_sink(). */
#ifndef ASPEN_PRINT_H
#define ASPEN_PRINT_H

#ifdef __cplusplus
#include <cstdio> /* before the macro below, so that std::printf is declared first */
extern "C" {
#else
#include <stdio.h>
#endif

/* Hidden: every vertex library has its own, bound to its own sink. */
__attribute__((visibility("hidden"), format(printf, 1, 2))) int aspen_codelet_printf(const char *format, ...);

#ifdef __cplusplus
}
namespace std {
using ::aspen_codelet_printf;
}
#endif

#define printf aspen_codelet_printf

#endif
