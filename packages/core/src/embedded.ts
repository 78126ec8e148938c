/**
 * The embedded adapters: LanceDB and local ONNX / Model2Vec models. Production code reaches them only
 * through the factories of adapters-from-config.ts, which import them when the configuration asks;
 * tests and benchmarks that build them directly import this entry.
 */
export { LanceDbStore } from './stores/lancedb.ts';
export { LocalOnnxEmbedder } from './embedders/local-onnx.ts';
export { Model2VecEmbedder } from './embedders/model2vec.ts';
export { LocalCrossEncoderReranker } from './rerankers/local-cross-encoder.ts';
