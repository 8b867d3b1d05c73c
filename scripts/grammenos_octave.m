% Grammenos et al. (NeurIPS 2020), utility-loss figure, panel (b), with the AUTHORS' OWN
% functions: a cross-check of dpcore.experiments.grammenos (docs/baselines.md, issue #38).
%
% Needs GNU Octave (7.3 used) and three files of the authors' repository andylamp/federated_pca
% (GPLv3, not shipped here) in the working directory: synthetic_data_gen.m, mod_sulq.m and
% mod_sulq_variance.m. One port for Octave, whose double-quoted strings are char arrays:
% in synthetic_data_gen.m every `params.X == "y"` becomes `strcmp(params.X, "y")`, e.g.
%
%   sed -i 's/\(params\.[a-z_]*\) == \("[^"]*"\)/strcmp(\1, \2)/' synthetic_data_gen.m
%
% Then: octave --no-gui --quiet grammenos_octave.m
%
% The loop is that of their test_utility_loss.m for non-symmetric MOD-SuLQ (mod_sulq(Y, e, d, 0),
% svds(., 1), q_A = norm(U_ms' * U_Y)), 100 masks per epsilon, one data set per alpha and seed,
% at the epsilons read off the published figure, for ten seeds (Octave's generator is not
% MATLAB's, so seed 300 is not the authors' draw). It prints each seed's curve, then per alpha
% the mean and the standard deviation over the ten data sets.
feats = 20; T = 5000; sims = 100; rr = 1; alphas = [0.01, 0.1, .5, 1];
delta = .05; epsilons = [0.5 1 1.5 2 2.5 3 4]; seeds = 300:309;
q = zeros(numel(seeds), numel(alphas), numel(epsilons));
for si = 1:numel(seeds)
  rng(seeds(si), 'twister');
  synth_params.spectrum_type = "pl";
  for j = 1:numel(alphas)
    synth_params.alpha = alphas(j); synth_params.lambda = 1; synth_params.rand_type = "normal";
    [Y, ~] = synthetic_data_gen(feats, T, synth_params);
    [UamY, ~, ~] = svds(Y, rr);
    for kk = 1:sims
      for i = 1:numel(epsilons)
        [Ums_nonsym, ~, ~] = svds(mod_sulq(Y, epsilons(i), delta, 0), rr);
        q(si, j, i) = q(si, j, i) + norm(Ums_nonsym(:, 1:rr)' * UamY) / sims;
      end
    end
    printf("seed %d alpha %.2f q %s\n", seeds(si), alphas(j), sprintf("%.3f ", q(si, j, :)));
    fflush(stdout);
  end
end
for j = 1:numel(alphas)
  printf("alpha %.2f mean %s\n", alphas(j), sprintf("%.3f ", mean(q(:, j, :), 1)));
  printf("alpha %.2f sd   %s\n", alphas(j), sprintf("%.3f ", std(q(:, j, :), 0, 1)));
end
