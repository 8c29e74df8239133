/*
 * The JVM side of `schedlab bench --kernel square-to-len`: mirrors TestSquareToLen from the
 * JDK-8185976 review (seed 003), which squares one BigInteger over and over with
 * `b1.multiply(b1)`, and also times BigInteger.squareToLen itself, the method whose
 * implSquareToLen (and the implMulAdd it calls) HotSpot replaces with its intrinsics.
 *
 * Usage:
 *   java [-XX:+UnlockDiagnosticVMOptions] -XX:(+|-)UseSquareToLenIntrinsic
 *        -XX:(+|-)UseMulAddIntrinsic [--add-opens java.base/java.math=ALL-UNNAMED]
 *        BigIntegerBench <size,size,...> <warmup-ms> <budget-ms-per-size> [rounds [modes]]
 *
 *   size: "seed" (the review's operand, 324 decimal digits = 1075 bits = 34 ints) or a bit
 *         count that is a multiple of 32 (the review's sizes: 256..8192). An operand of `bits`
 *         bits has bits/32 ints, the seed's magnitude words repeated from its most significant
 *         one (so 1024 = the seed's 32 leading words). The Rust side builds the same int[].
 *   rounds: timed rounds per size and mode (default 5); the median is reported.
 *   modes: comma-separated modes to time (default multiply,square-to-len).
 *
 * Modes, each timed for every size:
 *   multiply       b.multiply(b), as TestSquareToLen (allocation and, from 128 ints on,
 *                  Karatsuba / Toom-Cook included: what an application sees).
 *   square-to-len  BigInteger.squareToLen(mag, len, z) through a MethodHandle with a reused z
 *                  (schedlab's kernel computes exactly this). Needs the --add-opens above;
 *                  without it a BIGINTBENCH-SKIP line says so.
 *   mul-add        BigInteger.mulAdd(out, mag, 0, len, MUL_ADD_K) through a MethodHandle, with
 *                  out = int[len + 1] (zero before the checked call, accumulating while timed);
 *                  the result is carry·2^(32·len) + out[1..] = operand · (MUL_ADD_K & LONG_MASK).
 *                  Same --add-opens requirement.
 *
 * Output (one line each, machine-readable, `key=value` fields):
 *   BIGINTBENCH-VM java.version=<v> UseSquareToLenIntrinsic=<true|false|unknown>
 *                  UseMulAddIntrinsic=<true|false|unknown>
 *   BIGINTBENCH mode=<mode> size=<size> bits=<operand bit length> ints=<len> calls=<n>
 *               ns_per_call=<median ns> samples=<ns,ns,...> digest=<h> check=ok
 *               (ns figures are decimal fractions: a 256-bit mul-add takes a few ns)
 *   BIGINTBENCH-SKIP mode=<mode> reason=<text without spaces>
 *
 * digest is Java's BigInteger.hashCode of the result (the square; mul-add: the product): h = 31 * h + mag[i] over the magnitude
 * (int arithmetic), in hex. check=ok means the mode's result equals the interpreter-era
 * b.multiply(b) (mul-add: b.multiply(k)) computed before the warm-up, as TestSquareToLen checks; a mismatch prints
 * check=FAILED and the exit status is 1.
 */
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public final class BigIntegerBench {
    /** The operand of TestSquareToLen (JDK-8185976 review). */
    static final String SEED_OPERAND =
            "348939809235573590863505149820825039200022983118773208599936"
            + "739559418380102146884307139175604920787313701663155983793121475492609222"
            + "378029211020760922327218480828933663005773596942372680852064103011811651"
            + "644018048833823482390819947896524207635857984552089977996313113154016668"
            + "718795349783157384006672542605760392289645528307";

    /** Keeps the JIT from discarding the results. */
    static volatile int sink;

    /** The multiplier of the mul-add mode (negative as an int: exercises `k & LONG_MASK`). */
    static final int MUL_ADD_K = 0x9e3779b9;

    static final MethodHandle SQUARE_TO_LEN = handle("squareToLen",
            MethodType.methodType(int[].class, int[].class, int.class, int[].class));

    static final MethodHandle MUL_ADD = handle("mulAdd", MethodType.methodType(
            int.class, int[].class, int[].class, int.class, int.class, int.class));

    static MethodHandle handle(String name, MethodType type) {
        try {
            MethodHandles.Lookup lookup =
                    MethodHandles.privateLookupIn(BigInteger.class, MethodHandles.lookup());
            return lookup.findStatic(BigInteger.class, name, type);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    static String vmFlag(String name) {
        try {
            Class<?> beanClass = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            Object bean = ManagementFactory.getPlatformMXBean(
                    beanClass.asSubclass(java.lang.management.PlatformManagedObject.class));
            Object option = beanClass.getMethod("getVMOption", String.class).invoke(bean, name);
            return String.valueOf(option.getClass().getMethod("getValue").invoke(option));
        } catch (Exception | LinkageError e) {
            return "unknown";
        }
    }

    /** The big-endian magnitude of a positive BigInteger. */
    static int[] magnitude(BigInteger v) {
        byte[] bytes = v.toByteArray();
        int start = bytes[0] == 0 ? 1 : 0;
        int n = (bytes.length - start + 3) / 4;
        int[] mag = new int[n];
        for (int i = bytes.length - 1, w = n - 1, shift = 0; i >= start; i--) {
            mag[w] |= (bytes[i] & 0xff) << shift;
            shift += 8;
            if (shift == 32) {
                shift = 0;
                w--;
            }
        }
        return mag;
    }

    static BigInteger fromMagnitude(int[] mag) {
        byte[] bytes = new byte[4 * mag.length];
        for (int i = 0; i < mag.length; i++) {
            bytes[4 * i] = (byte) (mag[i] >>> 24);
            bytes[4 * i + 1] = (byte) (mag[i] >>> 16);
            bytes[4 * i + 2] = (byte) (mag[i] >>> 8);
            bytes[4 * i + 3] = (byte) mag[i];
        }
        return new BigInteger(1, bytes);
    }

    static BigInteger operand(String size) {
        BigInteger seed = new BigInteger(SEED_OPERAND);
        if (size.equals("seed")) {
            return seed;
        }
        int bits = Integer.parseInt(size);
        if (bits <= 0 || bits % 32 != 0) {
            throw new IllegalArgumentException("size must be `seed` or a positive multiple of 32: " + size);
        }
        int[] seedMag = magnitude(seed);
        int[] mag = new int[bits / 32];
        for (int i = 0; i < mag.length; i++) {
            mag[i] = seedMag[i % seedMag.length];
        }
        return fromMagnitude(mag);
    }

    static int[] squareToLen(int[] x, int[] z) throws Throwable {
        return (int[]) SQUARE_TO_LEN.invokeExact(x, x.length, z);
    }

    static int mulAdd(int[] out, int[] in) throws Throwable {
        return (int) MUL_ADD.invokeExact(out, in, 0, in.length, MUL_ADD_K);
    }

    /** mul-add's result: the carry as the top word above out[1..]. */
    static BigInteger mulAddResult(int[] out, int carry) {
        int[] v = out.clone();
        v[0] = carry;
        return fromMagnitude(v);
    }

    interface Op {
        int run() throws Throwable;
    }

    static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    /** Times `op` in `rounds` rounds of `budgetNanos / rounds`; returns calls and ns per call. */
    static double[] time(Op op, long budgetNanos, int rounds, List<Double> samples) throws Throwable {
        long calls = 0;
        double[] perCall = new double[rounds];
        int acc = 0;
        for (int r = 0; r < rounds; r++) {
            long n = 0;
            int batch = 16;
            long start = System.nanoTime();
            long now;
            do {
                for (int i = 0; i < batch; i++) {
                    acc += op.run();
                }
                n += batch;
                now = System.nanoTime();
            } while (now - start < budgetNanos / rounds);
            perCall[r] = (double) (now - start) / n;
            samples.add(perCall[r]);
            calls += n;
        }
        sink = acc;
        return new double[] {calls, median(perCall)};
    }

    public static void main(String[] args) throws Throwable {
        if (args.length < 3 || args.length > 5) {
            System.err.println("usage: BigIntegerBench <size,size,...> <warmup-ms> <budget-ms-per-size> [rounds [modes]]");
            System.exit(2);
        }
        String[] sizes = args[0].split(",");
        long warmupNanos = Long.parseLong(args[1]) * 1_000_000L;
        long budgetNanos = Long.parseLong(args[2]) * 1_000_000L;
        int rounds = args.length >= 4 ? Integer.parseInt(args[3]) : 5;
        if (rounds < 1) {
            System.err.println("rounds must be at least 1");
            System.exit(2);
        }
        List<String> modes = Arrays.asList((args.length == 5 ? args[4] : "multiply,square-to-len").split(","));
        for (String m : modes) {
            if (!m.equals("multiply") && !m.equals("square-to-len") && !m.equals("mul-add")) {
                System.err.println("unknown mode " + m + "; valid: multiply, square-to-len, mul-add");
                System.exit(2);
            }
        }
        boolean doMultiply = modes.contains("multiply");
        boolean doSquare = modes.contains("square-to-len") && SQUARE_TO_LEN != null;
        boolean doMulAdd = modes.contains("mul-add") && MUL_ADD != null;
        System.out.println("BIGINTBENCH-VM java.version=" + System.getProperty("java.version")
                + " UseSquareToLenIntrinsic=" + vmFlag("UseSquareToLenIntrinsic")
                + " UseMulAddIntrinsic=" + vmFlag("UseMulAddIntrinsic"));

        BigInteger[] operands = new BigInteger[sizes.length];
        int[][] mags = new int[sizes.length][];
        BigInteger[] expected = new BigInteger[sizes.length];
        BigInteger[] expectedMulAdd = new BigInteger[sizes.length];
        BigInteger k = BigInteger.valueOf(MUL_ADD_K & 0xffffffffL);
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = sizes[i].trim();
            operands[i] = operand(sizes[i]);
            mags[i] = magnitude(operands[i]);
            // Before any warm-up: mostly interpreted, as TestSquareToLen's `check`.
            expected[i] = operands[i].multiply(operands[i]);
            expectedMulAdd[i] = operands[i].multiply(k);
        }
        if (modes.contains("square-to-len") && SQUARE_TO_LEN == null) {
            System.out.println("BIGINTBENCH-SKIP mode=square-to-len reason="
                    + "BigInteger.squareToLen_not_accessible:_run_with_--add-opens_java.base/java.math=ALL-UNNAMED");
        }
        if (modes.contains("mul-add") && MUL_ADD == null) {
            System.out.println("BIGINTBENCH-SKIP mode=mul-add reason="
                    + "BigInteger.mulAdd_not_accessible:_run_with_--add-opens_java.base/java.math=ALL-UNNAMED");
        }

        // Warm-up: every size and mode in turn.
        long warmupEnd = System.nanoTime() + warmupNanos;
        int acc = 0;
        while (System.nanoTime() < warmupEnd) {
            for (int i = 0; i < sizes.length; i++) {
                BigInteger b = operands[i];
                int[] z = new int[2 * mags[i].length];
                int[] out = new int[mags[i].length + 1];
                for (int r = 0; r < 64; r++) {
                    if (doMultiply) {
                        acc += b.multiply(b).hashCode();
                    }
                    if (doSquare) {
                        acc += squareToLen(mags[i], z)[0];
                    }
                    if (doMulAdd) {
                        acc += mulAdd(out, mags[i]);
                    }
                }
            }
        }
        sink = acc;

        boolean ok = true;
        for (int i = 0; i < sizes.length; i++) {
            final BigInteger b = operands[i];
            final int[] x = mags[i];
            final int[] z = new int[2 * x.length];
            String common = " size=" + sizes[i] + " bits=" + b.bitLength() + " ints=" + x.length;

            final int[] out = new int[x.length + 1];

            if (doMultiply) {
                List<Double> samples = new ArrayList<>();
                double[] t = time(() -> b.multiply(b).hashCode(), budgetNanos, rounds, samples);
                BigInteger square = b.multiply(b);
                ok &= report("multiply", common, t, samples, square, expected[i]);
            }
            if (doSquare) {
                List<Double> samples = new ArrayList<>();
                double[] t = time(() -> squareToLen(x, z)[0], budgetNanos, rounds, samples);
                Arrays.fill(z, 0);
                BigInteger square = fromMagnitude(squareToLen(x, z));
                ok &= report("square-to-len", common, t, samples, square, expected[i]);
            }
            if (doMulAdd) {
                List<Double> samples = new ArrayList<>();
                double[] t = time(() -> mulAdd(out, x), budgetNanos, rounds, samples);
                Arrays.fill(out, 0);
                BigInteger product = mulAddResult(out, mulAdd(out, x));
                ok &= report("mul-add", common, t, samples, product, expectedMulAdd[i]);
            }
        }
        System.exit(ok ? 0 : 1);
    }

    static boolean report(String mode, String common, double[] t, List<Double> samples,
                          BigInteger square, BigInteger expected) {
        boolean ok = square.equals(expected);
        StringBuilder s = new StringBuilder();
        for (double v : samples) {
            s.append(s.length() == 0 ? "" : ",").append(v);
        }
        System.out.println("BIGINTBENCH mode=" + mode + common + " calls=" + (long) t[0]
                + " ns_per_call=" + t[1] + " samples=" + s
                + " digest=" + Integer.toHexString(square.hashCode())
                + " check=" + (ok ? "ok" : "FAILED"));
        return ok;
    }
}
