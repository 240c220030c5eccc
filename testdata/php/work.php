<?php
// work.php SECONDS: TestPerfDataPHP's workload, run with PHP's JIT on
// (opcache): about half its time in hot, the rest in fib, a class
// method among it.

class Mixer {
    public function mix(int $h, int $i): int {
        return ($h * 31 + $i) & 0xffffff;
    }
}

function fib(int $n): int {
    return $n < 2 ? $n : fib($n - 1) + fib($n - 2);
}

function hot(Mixer $m, int $n): int {
    $h = 1;
    for ($i = 0; $i < $n; $i++) {
        $h = $m->mix($h, $i);
    }
    return $h;
}

$end = microtime(true) + (float)($argv[1] ?? 1);
$m = new Mixer();
$sum = 0;
while (microtime(true) < $end) {
    $sum += fib(20) + hot($m, 20000);
}
echo $sum, "\n";
