// f32 -> f8e4m3fn converter, combinational: an example design for `numref conform`.
//
// Behaviour: numref spec 0.2.0, §11 (conversion) with the narrow policy of the profile
// cuda_satfinite (§10.1):
//   round=rne          §4   round to nearest, ties to even
//   overflow=saturate  §6.1 a finite value that rounds above 448 gives +-448 (7e / fe)
//   inf_sat=max        §6.2 +-Inf gives +-448
//   nan=ones           §6.3 every NaN gives 7f (positive, all magnitude bits set)
//   daz=0 ftz=0 tininess=after  §8, §9.2 (f32 subnormals are converted; tiny after rounding)
// and the exception flags of §9.1 (01 inexact, 02 underflow, 04 overflow, 10 invalid).
// The other knobs of the policy (nan_to_finite, e8m0_round, zero_to_nozero, negative,
// int_range) do not apply to this pair.
//
// `define SEEDED_DEFECT_TIES_AWAY builds the same design with one seeded defect: ties round
// away from zero (the rna rule) instead of to even. `numref conform` must catch it.
module f32_to_e4m3 (
    input  logic [31:0] x,
    output logic [7:0]  y,
    output logic [7:0]  flags
);
  localparam logic [7:0] INEXACT = 8'h01, UNDERFLOW = 8'h02, OVERFLOW = 8'h04, INVALID = 8'h10;

  logic        s;
  logic [7:0]  e;
  logic [22:0] m;
  assign s = x[31];
  assign e = x[30:23];
  assign m = x[22:0];

  // §3: a finite x is sig * 2^(max(e,1) - 150), sig with the hidden bit.
  logic [23:0] sig;
  assign sig = {e != 8'd0, m};

  // The target quantum (§4.1): 2^(e-127-3) where the result is normal (e >= 121, |x| >= 2^-6),
  // else the subnormal quantum 2^-9. The bits of sig below it: 20 + d with d = 0 for a normal
  // result, else 121 - max(e,1) capped at 6 (anything below 2^-10 only sets the sticky bit).
  logic [2:0] d;
  always_comb begin
    if (e >= 8'd121) d = 3'd0;
    else if (e >= 8'd115) d = 3'(8'd121 - e);
    else d = 3'd6;
  end

  // sig above 6 zero bits, so that the shift loses nothing: w[29:26] = the kept bits (the
  // result's significand, 8..15 for a normal result, 0..7 for a subnormal), w[25] the round
  // bit, w[24:0] the sticky bits.
  logic [29:0] w;
  logic [3:0]  kept;
  logic        rnd, sticky, inc;
  assign w      = {sig, 6'b0} >> d;
  assign kept   = w[29:26];
  assign rnd    = w[25];
  assign sticky = |w[24:0];
`ifdef SEEDED_DEFECT_TIES_AWAY
  assign inc = rnd;                         // DEFECT: a tie goes away from zero
`else
  assign inc = rnd & (sticky | kept[0]);    // §4.2 rne: up above the tie, at the tie to even
`endif

  // The magnitude code before and after the increment: ((e - 121) << 3) + kept for a normal
  // result (kept carries the hidden bit into the exponent field), kept for a subnormal one. A
  // carry out of the fraction moves into the exponent field, as the code order needs.
  logic [8:0] mag_pre, mag;
  assign mag_pre = ((e >= 8'd121) ? {1'b0, 5'(e - 8'd121), 3'b0} : 9'd0) + {5'b0, kept};
  assign mag     = mag_pre + {8'b0, inc};

  // §9.2 tininess after rounding: below 2^-6 unless x rounds (at 4 significant bits) up to 2^-6.
  logic tiny, inexact, ovf;
  assign tiny    = (e < 8'd120) || (e == 8'd120 && sig[23:19] != 5'b11111);
  assign inexact = rnd | sticky;
  assign ovf     = (e > 8'd135) || (mag >= 9'h07f);  // §6.1: above 448 after rounding

  always_comb begin
    if (e == 8'hff && m != 23'd0) begin            // §6.3 NaN; signaling (quiet bit clear): invalid
      y     = 8'h7f;
      flags = m[22] ? 8'h00 : INVALID;
    end else if (e == 8'hff) begin                 // §6.2 step 3: +-Inf saturates
      y     = {s, 7'h7e};
      flags = OVERFLOW | INEXACT;
    end else if (e == 8'd0 && m == 23'd0) begin    // §6.6 +-0
      y     = {s, 7'h00};
      flags = 8'h00;
    end else if (ovf) begin                        // §6.1 overflow=saturate
      y     = {s, 7'h7e};
      flags = OVERFLOW | INEXACT;
    end else begin
      y     = {s, mag[6:0]};
      flags = (inexact ? INEXACT : 8'h00) | ((tiny && inexact) ? UNDERFLOW : 8'h00);
    end
  end
endmodule
