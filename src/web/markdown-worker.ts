/**
 * The lane long article bodies are rendered on (bodyRenderer in markdown.ts). Built into the
 * binary as an entry point of its own.
 */
import { serveLane } from '../lane.ts'
import { renderMarkdown } from './markdown.ts'

serveLane(renderMarkdown)
