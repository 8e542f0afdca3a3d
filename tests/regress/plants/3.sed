# plant 3, for tests/test_regress.c: dot sums the same terms last to first (the code after the
# return is left unreachable)
s/^    MUL(R(r), E(X, xo), E(Y, yo));$/    MUL(R(r), E(X, xo + n - 1), E(Y, yo + n - 1)); for (int j = n - 2; j >= 0; j--) { MUL(t, E(X, xo + j), E(Y, yo + j)); ADD(R(r), R(r), t); } FRAME_END; return;/
