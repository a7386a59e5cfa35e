// Copyright (c) Aspen contributors. An IPU assembly codelet: refused by Aspen's popc.
.section .text.Asm
.globl Asm
Asm:
  setzi $m0, 1
  exitz $mzero
