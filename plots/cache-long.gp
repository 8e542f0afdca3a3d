# cache-long.gp: cache.gp's figure to 10^6 tokens decoded, from the cachelong-* tables of make
# figures-long (the same caches and setting).
# Usage: gnuplot -e "dir='data'; out='figures/cache-long'" plots/cache-long.gp
long = 1
load system("dirname '" . ARG0 . "'") . '/cache.gp'
