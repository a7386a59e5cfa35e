/* Copyright (c) Aspen contributors.
 * C code with global state compiled into a codelet library (tile_state_codelets.cpp
 * calls it): each tile that runs it owns its copy of these variables. */
static int accumulator = 100;
int tileStateCalls;

int tileStateAccumulate(int x) {
  ++tileStateCalls;
  accumulator += x;
  return accumulator * 1000 + tileStateCalls;
}
