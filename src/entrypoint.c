// We need to forward routine registration from C to Rust
// to avoid the linker removing the static library.

void R_init_rdarrow_extendr(void *dll);
void rdarrow_register_lazy_strings(void *dll);

void R_init_rdarrow(void *dll) {
    R_init_rdarrow_extendr(dll);
    rdarrow_register_lazy_strings(dll);
}
