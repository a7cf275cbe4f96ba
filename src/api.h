/* bochner: the .Call entry points, registered in init.c.  A wrapper checks and
 * converts R's arguments, allocates the result and calls the core (bochner.h), which
 * works on plain arrays; the wrappers live in api_*.c, one file per layer, so that the
 * algorithm files hold no R API (falkon.h shares FALKON's pass states between falkon.c
 * and api_falkon.c, whose chunked states travel to R as lists). */
#ifndef BOCHNER_API_H
#define BOCHNER_API_H

#include "bochner.h"

/* api_system.c: the machine: the address-space limit, the cores */
SEXP bochner_address_space_limit_call(void);
SEXP bochner_max_threads(void);

/* api_kernels.c: kernel matrices, spectral samples, orthogonal and QMC frequencies */
SEXP bochner_kernel_matrix_call(SEXP code, SEXP par, SEXP x, SEXP y,
                                SEXP nthreads);
SEXP bochner_spectral_sample_call(SEXP code, SEXP par, SEXP n, SEXP d);
SEXP bochner_orthogonal_frequencies_call(SEXP code, SEXP par, SEXP D, SEXP d);
SEXP bochner_qmc_frequencies_call(SEXP code, SEXP par, SEXP D, SEXP d, SEXP with_phase);

/* api_maps.c: feature maps: Fourier, SORF, polynomial, min */
SEXP bochner_rff_transform_call(SEXP x, SEXP w, SEXP b, SEXP scale, SEXP transposed,
                                SEXP nthreads);
SEXP bochner_rff_decision_call(SEXP x, SEXP w, SEXP b, SEXP scale, SEXP beta,
                               SEXP intercept, SEXP nthreads);
SEXP bochner_projection_transform_call(SEXP x, SEXP w, SEXP term_ptr,
                                       SEXP term_deg, SEXP term_weight,
                                       SEXP constant, SEXP nthreads);
SEXP bochner_tensorsketch_transform_call(SEXP x, SEXP hash, SEXP sign,
                                         SEXP D, SEXP scale, SEXP offset,
                                         SEXP nthreads);
SEXP bochner_min_transform_call(SEXP x, SEXP t, SEXP tmax, SEXP constant,
                                SEXP nthreads);
SEXP bochner_rpcholesky_call(SEXP x, SEXP code, SEXP par, SEXP diag, SEXP m, SEXP block,
                             SEXP nthreads, SEXP state, SEXP keep);
SEXP bochner_sparse_rff_call(SEXP x, SEXP w, SEXP wt, SEXP b, SEXP scale, SEXP layout,
                             SEXP beta, SEXP intercept, SEXP nthreads);
SEXP bochner_sparse_dist_call(SEXP x, SEXP manhattan);
SEXP bochner_structured_transform_call(SEXP x, SEXP sign, SEXP radial, SEXP phase,
                                       SEXP scale, SEXP nthreads);

/* api_products.c: the dense products */
SEXP bochner_sproduct_call(SEXP a, SEXP b, SEXP transa, SEXP nthreads);
SEXP bochner_matprod_call(SEXP a, SEXP b, SEXP nthreads);
SEXP bochner_crossprod_call(SEXP a, SEXP nthreads);
SEXP bochner_moments_step_call(SEXP state, SEXP z, SEXP y, SEXP w, SEXP single,
                               SEXP nthreads);
SEXP bochner_moments_finish_call(SEXP state, SEXP nthreads);
SEXP bochner_column_sums_exact_call(SEXP x, SEXP a, SEXP b, SEXP nthreads);
SEXP bochner_column_moments_exact_call(SEXP state, SEXP rows);

/* api_ridge.c: the ridge solve, the Cholesky factor and its solves, and the lambda path */
SEXP bochner_ridge_solve_call(SEXP A, SEXP B, SEXP lambda, SEXP nthreads);
SEXP bochner_cholesky_call(SEXP A, SEXP lambda, SEXP nthreads);
SEXP bochner_cholesky_solve_call(SEXP R, SEXP B);
SEXP bochner_triangular_solve_call(SEXP R, SEXP B, SEXP op, SEXP nthreads);
SEXP bochner_ridge_spectrum_call(SEXP A, SEXP B, SEXP nthreads);
SEXP bochner_ridge_q_rows_call(SEXP X, SEXP V, SEXP T, SEXP nthreads);
SEXP bochner_ridge_path_rows_call(SEXP d, SEXP e, SEXP lambda, SEXP U, SEXP g, SEXP nthreads);

/* api_kmeans.c: kernel k-means: the two methods and the block steps of the chunked fit */
SEXP bochner_kmeans_gram_call(SEXP x, SEXP code, SEXP par, SEXP k, SEXP weights, SEXP init,
                              SEXP hartigan, SEXP seeding,
                              SEXP nstart, SEXP itermax, SEXP nthreads);
SEXP bochner_kmeans_lloyd_call(SEXP z, SEXP k, SEXP weights, SEXP init, SEXP hartigan,
                               SEXP seeding, SEXP nstart,
                               SEXP itermax, SEXP nthreads);
SEXP bochner_kmeans_centre_distances_call(SEXP z, SEXP centres, SEXP nthreads);
SEXP bochner_kmeans_gram_distances_call(SEXP y, SEXP x, SEXP code, SEXP par,
                                        SEXP weights, SEXP cluster, SEXP size, SEXP sq,
                                        SEXP nthreads);
SEXP bochner_kmeans_block_call(SEXP z, SEXP centres, SEXP weights, SEXP own, SEXP nfar,
                               SEXP nthreads);
SEXP bochner_kmeans_hartigan_block_call(SEXP z, SEXP cluster, SEXP sums, SEXP counts,
                                        SEXP last, SEXP base, SEXP window, SEXP nthreads);
SEXP bochner_kmeans_pp_block_call(SEXP z, SEXP seeds, SEXP trials, SEXP weights, SEXP targets,
                                  SEXP nthreads);
SEXP bochner_kmeans_pp_kernel_call(SEXP x, SEXP code, SEXP par, SEXP diag, SEXP m,
                                   SEXP nthreads);

/* api_gp.c: Gaussian processes on random features */
SEXP bochner_gp_stats_call(SEXP x, SEXP w, SEXP amp, SEXP y, SEXP sw, SEXP single,
                           SEXP nthreads);
SEXP bochner_gp_gradient_call(SEXP x, SEXP w, SEXP amp, SEXP y, SEXP sw, SEXP alpha,
                              SEXP ainv, SEXP s2, SEXP nthreads);
SEXP bochner_gp_chol_call(SEXP a, SEXP nthreads);

/* api_testing.c: test-only entry points (called from tests/, never from R/) */
SEXP bochner_fast_sincos(SEXP x);
SEXP bochner_fast_exp(SEXP x, SEXP scale);
SEXP bochner_fft_call(SEXP z, SEXP inverse);
SEXP bochner_tile_product_call(SEXP x, SEXP w, SEXP isa, SEXP transa);
SEXP bochner_stile_product_call(SEXP x, SEXP w, SEXP isa, SEXP transa);
SEXP bochner_huge_pages_call(void);
SEXP bochner_float_matrix_call(SEXP x);
SEXP bochner_fast_math_f(SEXP x, SEXP what, SEXP scale);
SEXP bochner_fwht_call(SEXP x);
SEXP bochner_falkon_factor_get_call(SEXP F, SEXP which);

/* api_falkon.c: FALKON's passes over the rows and their chunked states */
SEXP bochner_falkon_knm_apply_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP U, SEXP V,
                                   SEXP w, SEXP init, SEXP block_rows, SEXP keep_ku,
                                   SEXP nthreads, SEXP K, SEXP single);
SEXP bochner_falkon_predict_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP alpha,
                                 SEXP block_rows, SEXP nthreads);
SEXP bochner_falkon_knm_part_call(SEXP x, SEXP centres, SEXP code, SEXP par, SEXP U, SEXP V,
                                  SEXP w, SEXP block_rows, SEXP keep_ku, SEXP nthreads,
                                  SEXP row0, SEXP total, SEXP single);
SEXP bochner_falkon_pass_fold_call(SEXP A, SEXP B, SEXP total, SEXP centres, SEXP code,
                                   SEXP par);
SEXP bochner_falkon_pass_finish_call(SEXP state, SEXP init);
SEXP bochner_falkon_kernel_cache_call(SEXP x, SEXP centres, SEXP code, SEXP par,
                                      SEXP block_rows, SEXP nthreads, SEXP single);

/* api_falkon.c: FALKON's m x m factors (an external pointer) */
SEXP bochner_falkon_factor_call(SEXP centres, SEXP code, SEXP par, SEXP eps, SEXP nthreads);
SEXP bochner_falkon_factor_precond_call(SEXP F, SEXP lambda, SEXP s, SEXP nthreads);
SEXP bochner_falkon_factor_solve_call(SEXP F, SEXP B, SEXP which, SEXP trans, SEXP nthreads);
SEXP bochner_falkon_factor_tprod_call(SEXP F, SEXP B, SEXP trans, SEXP nthreads);
SEXP bochner_falkon_factor_copy_call(SEXP F);
SEXP bochner_falkon_factor_keep_g_call(SEXP F, SEXP nthreads);

/* api_statistics.c: the kernel tests' permutation nulls and feature-moment folds */
SEXP bochner_mmd_perm_gram_call(SEXP K, SEXP m, SEXP B, SEXP nthreads);
SEXP bochner_mmd_draw_call(SEXP N, SEXP m, SEXP B);
SEXP bochner_mmd_bits_slice_call(SEXP bits, SEXP B, SEXP w0, SEXP w1);
SEXP bochner_mmd_fold_start_call(SEXP bits, SEXP r0, SEXP N, SEXP m, SEXP B, SEXP D);
SEXP bochner_mmd_fold_step_call(SEXP state, SEXP z, SEXP nthreads);
SEXP bochner_mmd_fold_finish_call(SEXP state);
SEXP bochner_hsic_perm_gram_call(SEXP K, SEXP L, SEXP B, SEXP nthreads);
SEXP bochner_stat_moments_step_call(SEXP state, SEXP z, SEXP single, SEXP nthreads);
SEXP bochner_stat_moments_finish_call(SEXP state, SEXP nthreads);

/* api_svm.c: the linear SVM in memory and CoCoA+'s local solver */
SEXP bochner_svm_dcd_call(SEXP zt, SEXP y, SEXP k, SEXP cp, SEXP cn, SEXP loss,
                          SEXP bias, SEXP eps, SEXP max_iter, SEXP shrink,
                          SEXP nthreads);
SEXP bochner_svm_local_call(SEXP zt, SEXP rows, SEXP offsets, SEXP sign, SEXP cost,
                            SEXP loss, SEXP bias, SEXP w, SEXP alpha, SEXP sigma,
                            SEXP passes, SEXP eps, SEXP shrink, SEXP norms,
                            SEXP nthreads);

/* api_products.c: a float matrix from R (a raw vector with "float_dim"), read by the
 * float products' wrappers there and in api_testing.c */
const float *bochner_float_operand(SEXP x, const char *what, int *nr, int *nc);
/* api_falkon.c: the factor held by a FALKON factor's external pointer, checked (also
 * read by api_testing.c) */
bochner_falkon_packed bochner_falkon_packed_arg(SEXP F);

#endif
