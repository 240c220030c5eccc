// A CPU-bound Java program for the perf map fixture (see generate.sh): it
// starts and stops gperftools' CPU profiler itself with signal 40
// (CPUPROFILESIGNAL=40; HotSpot uses SIGUSR2 for its own threads), after
// a warm-up that gets hot() compiled.
public class App {
    static int hot(int[] a) {
        int s = 0;
        for (int i = 0; i < a.length; i++) s += (a[i] * 31) ^ (s >>> 3);
        return s;
    }
    static long sortWork(int n) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) a[i] = (i * 7919) % n;
        java.util.Arrays.sort(a);
        return a[n / 2];
    }
    static void signal() throws Exception {
        if (System.getenv("CPUPROFILESIGNAL") == null) return; // not under gperftools: signal 40 would end the JVM
        new ProcessBuilder("kill", "-40", Long.toString(ProcessHandle.current().pid())).start().waitFor();
    }
    public static void main(String[] args) throws Exception {
        int[] a = new int[10000];
        for (int i = 0; i < a.length; i++) a[i] = i;
        long x = 0;
        for (int i = 0; i < 2000; i++) x += hot(a); // warm up: compiled before profiling
        signal();
        long end = System.currentTimeMillis() + Long.parseLong(args.length > 0 ? args[0] : "2000");
        while (System.currentTimeMillis() < end) { x += hot(a) + sortWork(5000); }
        signal();
        Thread.sleep(200);
        System.out.println(x != 0 ? "ok" : "zero");
    }
}
