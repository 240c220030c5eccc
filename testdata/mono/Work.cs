// Work.cs SECONDS: TestPerfDataMono's workload, compiled by mcs and run
// by Mono's JIT with --jitmap: most of its time in Hot, the rest in Fib.
using System;

class Work {
    static int Fib(int n) {
        return n < 2 ? n : Fib(n - 1) + Fib(n - 2);
    }

    static uint Hot(uint n) {
        uint h = 1;
        for (uint i = 0; i < n; i++) {
            h = h * 31 + i;
        }
        return h;
    }

    static void Main(string[] args) {
        var end = DateTime.Now.AddSeconds(double.Parse(args[0]));
        long sum = 0;
        while (DateTime.Now < end) {
            sum += Fib(22) + Hot(200000);
        }
        Console.WriteLine(sum);
    }
}
