/**
 * How the dense vectors of a new Qdrant collection are held, as fields of its vector params
 * (https://api.qdrant.tech/v-1-17-x/api-reference/collections/create-collection, VectorParams `on_disk` and
 * `quantization_config`). Scalar quantization (https://qdrant.tech/documentation/guides/quantization/#setting-up-scalar-quantization):
 * an int8 copy of each vector, kept in RAM (`always_ram`), searched first and rescored with the float32
 * originals, which `on_disk` leaves memory-mapped on disk; `quantile: 0.99` clips the 1% most extreme values
 * when choosing the int8 range, Qdrant's documented example.
 */
export interface DenseVectorStorage {
  /** QDRANT_QUANTIZATION. */
  quantization?: 'none' | 'int8' | undefined;
  /** QDRANT_VECTORS_ON_DISK; undefined: on with int8 quantization, Qdrant's default (in RAM) without. */
  onDisk?: boolean | undefined;
}

export const INT8_QUANTIZATION = { scalar: { type: 'int8', quantile: 0.99, always_ram: true } } as const;

/** The fields to add to the dense vector's params; none when nothing is asked (Qdrant's defaults). */
export function denseStorageFields(storage: DenseVectorStorage | undefined): Record<string, unknown> {
  const quantized = storage?.quantization === 'int8';
  const onDisk = storage?.onDisk ?? (quantized ? true : undefined);
  return {
    ...(onDisk === undefined ? {} : { on_disk: onDisk }),
    ...(quantized ? { quantization_config: INT8_QUANTIZATION } : {}),
  };
}
