/* Registration of the .Call entry points (exact argument counts; declared in api.h). */
#include "api.h"
#include <R_ext/Rdynload.h>

#define CALLDEF(name, fun, n) {name, (DL_FUNC) &fun, n}

static const R_CallMethodDef call_methods[] = {
    CALLDEF("kernel_matrix", bochner_kernel_matrix_call, 5),
    CALLDEF("address_space_limit", bochner_address_space_limit_call, 0),
    CALLDEF("spectral_sample", bochner_spectral_sample_call, 4),
    CALLDEF("orthogonal_frequencies", bochner_orthogonal_frequencies_call, 4),
    CALLDEF("qmc_frequencies", bochner_qmc_frequencies_call, 5),
    CALLDEF("rff_transform", bochner_rff_transform_call, 6),
    CALLDEF("rff_decision", bochner_rff_decision_call, 7),
    CALLDEF("fast_sincos", bochner_fast_sincos, 1),
    CALLDEF("fast_exp", bochner_fast_exp, 2),
    CALLDEF("fast_math_f", bochner_fast_math_f, 3),
    CALLDEF("tile_product", bochner_tile_product_call, 4),
    CALLDEF("stile_product", bochner_stile_product_call, 4),
    CALLDEF("huge_pages", bochner_huge_pages_call, 0),
    CALLDEF("sproduct", bochner_sproduct_call, 4),
    CALLDEF("float_matrix", bochner_float_matrix_call, 1),
    CALLDEF("max_threads", bochner_max_threads, 0),
    CALLDEF("kmeans_gram", bochner_kmeans_gram_call, 11),
    CALLDEF("kmeans_lloyd", bochner_kmeans_lloyd_call, 9),
    CALLDEF("kmeans_centre_distances", bochner_kmeans_centre_distances_call, 3),
    CALLDEF("kmeans_gram_distances", bochner_kmeans_gram_distances_call, 9),
    CALLDEF("kmeans_block", bochner_kmeans_block_call, 6),
    CALLDEF("kmeans_hartigan_block", bochner_kmeans_hartigan_block_call, 8),
    CALLDEF("kmeans_pp_block", bochner_kmeans_pp_block_call, 6),
    CALLDEF("column_sums_exact", bochner_column_sums_exact_call, 4),
    CALLDEF("column_moments_exact", bochner_column_moments_exact_call, 2),
    CALLDEF("kmeans_pp_kernel", bochner_kmeans_pp_kernel_call, 6),
    CALLDEF("rpcholesky", bochner_rpcholesky_call, 9),
    CALLDEF("fft", bochner_fft_call, 2),
    CALLDEF("projection_transform", bochner_projection_transform_call, 7),
    CALLDEF("tensorsketch_transform", bochner_tensorsketch_transform_call, 7),
    CALLDEF("min_transform", bochner_min_transform_call, 5),
    CALLDEF("svm_dcd", bochner_svm_dcd_call, 11),
    CALLDEF("svm_local", bochner_svm_local_call, 15),
    CALLDEF("matprod", bochner_matprod_call, 3),
    CALLDEF("crossprod", bochner_crossprod_call, 2),
    CALLDEF("moments_step", bochner_moments_step_call, 6),
    CALLDEF("moments_finish", bochner_moments_finish_call, 2),
    CALLDEF("ridge_solve", bochner_ridge_solve_call, 4),
    CALLDEF("cholesky", bochner_cholesky_call, 3),
    CALLDEF("cholesky_solve", bochner_cholesky_solve_call, 2),
    CALLDEF("triangular_solve", bochner_triangular_solve_call, 4),
    CALLDEF("ridge_spectrum", bochner_ridge_spectrum_call, 3),
    CALLDEF("ridge_q_rows", bochner_ridge_q_rows_call, 4),
    CALLDEF("ridge_path_rows", bochner_ridge_path_rows_call, 6),
    CALLDEF("structured_transform", bochner_structured_transform_call, 6),
    CALLDEF("fwht", bochner_fwht_call, 1),
    CALLDEF("sparse_rff", bochner_sparse_rff_call, 9),
    CALLDEF("sparse_dist", bochner_sparse_dist_call, 2),
    CALLDEF("falkon_knm_apply", bochner_falkon_knm_apply_call, 13),
    CALLDEF("falkon_predict", bochner_falkon_predict_call, 7),
    CALLDEF("falkon_knm_part", bochner_falkon_knm_part_call, 13),
    CALLDEF("falkon_pass_fold", bochner_falkon_pass_fold_call, 6),
    CALLDEF("falkon_pass_finish", bochner_falkon_pass_finish_call, 2),
    CALLDEF("falkon_kernel_cache", bochner_falkon_kernel_cache_call, 7),
    CALLDEF("falkon_factor", bochner_falkon_factor_call, 5),
    CALLDEF("falkon_factor_precond", bochner_falkon_factor_precond_call, 4),
    CALLDEF("falkon_factor_solve", bochner_falkon_factor_solve_call, 5),
    CALLDEF("falkon_factor_tprod", bochner_falkon_factor_tprod_call, 4),
    CALLDEF("falkon_factor_get", bochner_falkon_factor_get_call, 2),
    CALLDEF("falkon_factor_copy", bochner_falkon_factor_copy_call, 1),
    CALLDEF("falkon_factor_keep_g", bochner_falkon_factor_keep_g_call, 2),
    CALLDEF("mmd_perm_gram", bochner_mmd_perm_gram_call, 4),
    CALLDEF("mmd_draw", bochner_mmd_draw_call, 3),
    CALLDEF("mmd_bits_slice", bochner_mmd_bits_slice_call, 4),
    CALLDEF("mmd_fold_start", bochner_mmd_fold_start_call, 6),
    CALLDEF("mmd_fold_step", bochner_mmd_fold_step_call, 3),
    CALLDEF("mmd_fold_finish", bochner_mmd_fold_finish_call, 1),
    CALLDEF("hsic_perm_gram", bochner_hsic_perm_gram_call, 4),
    CALLDEF("stat_moments_step", bochner_stat_moments_step_call, 4),
    CALLDEF("stat_moments_finish", bochner_stat_moments_finish_call, 2),
    CALLDEF("gp_stats", bochner_gp_stats_call, 7),
    CALLDEF("gp_gradient", bochner_gp_gradient_call, 9),
    CALLDEF("gp_chol", bochner_gp_chol_call, 2),
    {NULL, NULL, 0}
};

void R_init_bochner(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
    bochner_cpu_init();
    bochner_memory_init();
}
