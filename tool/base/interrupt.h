// tlab/tool/base/interrupt.h: Ctrl-C as a polled flag.
//
// The first SIGINT or SIGTERM sets a flag and restores the default action, so a
// second Ctrl-C kills tlab at once if a runner fails to notice the first. The
// runner polls interrupted() between operations and stops its case; the CLI then
// writes the partial report marked "interrupted": true and exits 130. Loading polls
// it between files (ScenarioLoader::load_paths): a Ctrl-C while `validate`, `run`
// or `check` reads many files exits 130 before the next file.
//
// Cost: interrupted() is one relaxed atomic load.
// Ground rules: install once from main(); interrupted() from any thread.
// Memory ordering: the flag carries no data; relaxed loads and stores suffice (the
// handler's store pairs with nothing but the flag itself).
#pragma once

namespace tlab::tool {

// install_interrupt_handler: installs the SIGINT/SIGTERM handlers and unblocks both
// (a SIGTERM pending from the parent sets the flag at once). Idempotent.
void install_interrupt_handler();
// interrupted: true once SIGINT or SIGTERM arrived (or request_interrupt() ran).
bool interrupted();
// request_interrupt: sets the flag as a signal would (tests, watchdogs).
void request_interrupt();
// clear_interrupt: resets the flag (tests only).
void clear_interrupt();

}  // namespace tlab::tool
