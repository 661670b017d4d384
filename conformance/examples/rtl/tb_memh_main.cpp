// The C++ main of the $readmemh testbench (tb_memh.sv): runs the simulation until $finish.
// A $fatal in the testbench (a mismatch, no records) ends the simulation and the program exits 1
// (fatalOnError(false): Verilator reports the error instead of calling abort()).
#include "Vtb_memh.h"
#include "verilated.h"

int main(int argc, char** argv) {
  VerilatedContext ctx;
  ctx.commandArgs(argc, argv);
  ctx.fatalOnError(false);
  Vtb_memh top{&ctx};
  while (!ctx.gotFinish()) {
    top.eval();
    if (!top.eventsPending()) break;
    ctx.time(top.nextTimeSlot());
  }
  top.final();
  return ctx.gotFinish() && !ctx.gotError() ? 0 : 1;
}
