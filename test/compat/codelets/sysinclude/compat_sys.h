/* Copyright (c) Aspen contributors. Found through popc's -isystem (Flags.cpp). */
#define COMPAT_FROM_ISYSTEM 13
