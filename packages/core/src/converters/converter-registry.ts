import { extname } from 'node:path';
import type { Converter } from './converter.ts';

/** Picks the converter for a document by its extension; later registrations win (docling over embedded). */
export class ConverterRegistry {
  private readonly byExtension = new Map<string, Converter>();

  constructor(converters: Converter[]) {
    for (const converter of converters) {
      for (const extension of converter.extensions) this.byExtension.set(extension, converter);
    }
  }

  forDocument(uri: string): Converter | undefined {
    return this.byExtension.get(extensionOf(uri));
  }

  get extensions(): string[] {
    return [...this.byExtension.keys()].sort();
  }
}

export function extensionOf(uri: string): string {
  return extname(uri).slice(1).toLowerCase();
}
