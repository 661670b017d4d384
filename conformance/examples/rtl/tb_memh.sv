// A self-checking SystemVerilog testbench that reads exported numref vectors with $readmemh.
//
//   numref vectors export --to memh --out e4m3.memh vectors/cast/cuda_satfinite/f32-f8e4m3fn.vec
//   rtl_f32_e4m3_memh +vectors=e4m3.memh
//
// The memh export of a cast f32 -> f8e4m3fn file (spec §31.8) holds one 48-bit word per
// record: [47:16] x (f32 input code), [15:8] y (expected f8e4m3fn code), [7:0] the expected
// §9.1 flags. $readmemh reads the file unchanged (its `//` header comments included). The
// words after the last record keep the fill value all-ones, which no record has (flags ff
// is not a combination of the §9.1 bits): the loop stops there.
module tb_memh;
  localparam int MaxRecords = 1 << 16;
  localparam logic [47:0] Fill = '1;

  logic [47:0] vec[MaxRecords];
  logic [31:0] x;
  logic [7:0]  y, flags;
  f32_to_e4m3 dut (.x(x), .y(y), .flags(flags));

  string file;
  int n = 0, errors = 0;
  initial begin
    if (!$value$plusargs("vectors=%s", file)) $fatal(1, "usage: +vectors=FILE.memh (numref vectors export --to memh)");
    for (int i = 0; i < MaxRecords; i++) vec[i] = Fill;
    $readmemh(file, vec);
    for (int i = 0; i < MaxRecords && vec[i] != Fill; i++) begin
      x = vec[i][47:16];
      #1;
      if ({y, flags} != vec[i][15:0]) begin
        errors++;
        if (errors <= 20)
          $display("MISMATCH record %0d: x=%08h got y=%02h flags=%02h, expected y=%02h flags=%02h", i, x, y, flags,
                   vec[i][15:8], vec[i][7:0]);
      end
      n++;
    end
    $display("%s: %0d records, %0d mismatches", file, n, errors);
    if (n == 0) $fatal(1, "no records read from %s", file);
    else if (errors != 0) $fatal(1, "%0d of %0d records differ from the numref vectors", errors, n);
    else $finish;
  end
endmodule
