# cplong.gp (make figures-long): cp.gp's figure of the context-parallel form at T = 10^6 (the
# cplong-gdn and cplong-mamba2 tables of sweeps/paper.sweep)
# Usage: gnuplot -e "dir='data'; out='figures/cplong'" plots/cplong.gp
pre = 'cplong'
keypos = 'top left' # where no curve of the 10^6-token tables runs
load system("dirname '" . ARG0 . "'") . '/cp.gp'
