/* Copyright (c) Aspen contributors. Found through popc's -I (Flags.cpp). */
#define COMPAT_FROM_I 11
