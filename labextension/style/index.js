import './base.css';
import './cell.css';
